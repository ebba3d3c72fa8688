/**
 * @module verdicts
 * Strict checks of what deciding services answer (invariant 9, fail closed). The loop acts on a
 * verdict only after it passed here, and acts on the clean copy these return, built from the verdict's
 * own properties, never on the object the plugin handed back (a getter, an inherited `verdict` from a
 * polluted Object.prototype, or a later change by the plugin cannot reach the decision).
 *
 * Each check returns `{ ok: true, value }` or `{ ok: false, problem }`, the problem saying what was wrong
 * in words a plugin author can act on. What the loop does with a problem is its own rule: policy denies,
 * the guardrail blocks, a verifier or progress service fails the run with `verdict_invalid`.
 */
import { CordageError, type Code } from '../contracts/errors.ts'
import type { PolicyDecision } from '../contracts/services/policy.ts'
import type { GuardVerdict } from '../contracts/services/guardrail.ts'
import type { Evidence, VerifyResult } from '../contracts/services/verifier.ts'
import type { ProgressVerdict, Stall } from '../contracts/services/progress.ts'
import type { Projection } from '../contracts/services/context.ts'
import type { Decision, ModelResponse, ProposedCall } from '../contracts/services/model.ts'
import type { Constraints } from '../contracts/data.ts'
import { checkConstraints } from './constraints.ts'
import { describe } from './describe-value.ts'

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string }

/** Verification codes a verifier may end a run with. */
const VerifyCodes: readonly Code[] = ['missing_evidence', 'verification_failed']

export function checkPolicyDecision(answer: unknown): Checked<PolicyDecision> {
  const o = own(answer)
  if (!o) return bad(`a policy decision is an object, got ${describe(answer)}`)
  if (o.verdict !== 'allow' && o.verdict !== 'ask' && o.verdict !== 'deny')
    return bad(`verdict must be allow, ask or deny, got ${describe(o.verdict)}`)
  if (!nonEmpty(o.ruleId)) return bad(`ruleId must be a non-empty string, got ${describe(o.ruleId)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  let approvers: string[] | undefined
  if (o.approvers !== undefined) {
    if (!Array.isArray(o.approvers) || !o.approvers.every(nonEmpty))
      return bad(`approvers must be a list of names, got ${describe(o.approvers)}`)
    approvers = [...o.approvers]
  }
  // Constrained allows (core/kernel/constraints.ts): only on allow, only known names with good values.
  let constraints: Constraints | undefined
  if (o.constraints !== undefined) {
    if (o.verdict !== 'allow') return bad(`constraints go only with an allow, not with ${o.verdict}`)
    const checked = checkConstraints(o.constraints)
    if (!checked.ok) return bad(checked.problem)
    constraints = checked.value
  }
  return {
    ok: true,
    value: {
      verdict: o.verdict,
      ruleId: o.ruleId,
      reason: o.reason,
      ...(approvers ? { approvers } : {}),
      ...(constraints ? { constraints } : {}),
    },
  }
}

export function checkGuardVerdict(answer: unknown): Checked<GuardVerdict> {
  const o = own(answer)
  if (!o) return bad(`a guardrail verdict is an object, got ${describe(answer)}`)
  if (o.action === 'pass') return { ok: true, value: { action: 'pass' } }
  if (o.action !== 'block' && o.action !== 'redact') return bad(`action must be pass, block or redact, got ${describe(o.action)}`)
  if (!nonEmpty(o.guard)) return bad(`guard must name the guard that tripped, got ${describe(o.guard)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  if (o.action === 'block') return { ok: true, value: { action: 'block', guard: o.guard, reason: o.reason } }
  if (typeof o.text !== 'string') return bad(`a redact verdict carries the cleaned text, got ${describe(o.text)}`)
  return { ok: true, value: { action: 'redact', guard: o.guard, reason: o.reason, text: o.text } }
}

export function checkVerifyResult(answer: unknown): Checked<VerifyResult> {
  const o = own(answer)
  if (!o) return bad(`a verifier verdict is an object, got ${describe(answer)}`)
  if (o.ok !== true && o.ok !== false) return bad(`ok must be true or false, got ${describe(o.ok)}`)
  const evidence = checkEvidence(o.evidence, o.ok)
  if (typeof evidence === 'string') return bad(evidence)
  if (o.ok) return { ok: true, value: { ok: true, evidence: evidence ?? [] } }
  if (!VerifyCodes.includes(o.code as Code))
    return bad(`a failing verdict's code must be ${VerifyCodes.join(' or ')}, got ${describe(o.code)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  if (typeof o.repairable !== 'boolean') return bad(`repairable must be true or false, got ${describe(o.repairable)}`)
  if (o.feedback !== undefined && typeof o.feedback !== 'string') return bad(`feedback must be a string, got ${describe(o.feedback)}`)
  return {
    ok: true,
    value: {
      ok: false,
      code: o.code as 'missing_evidence' | 'verification_failed',
      reason: o.reason,
      repairable: o.repairable,
      ...(o.feedback !== undefined ? { feedback: o.feedback } : {}),
      ...(evidence ? { evidence } : {}),
    },
  }
}

export function checkProgressVerdict(answer: unknown): Checked<ProgressVerdict> {
  const o = own(answer)
  if (!o) return bad(`a progress verdict is an object, got ${describe(answer)}`)
  if (o.kind === 'continue') return { ok: true, value: { kind: 'continue' } }
  if (o.kind !== 'feedback' && o.kind !== 'ask' && o.kind !== 'stop')
    return bad(`kind must be continue, feedback, ask or stop, got ${describe(o.kind)}`)
  if (!nonEmpty(o.detector)) return bad(`detector must name the detector, got ${describe(o.detector)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  const t = own(o.thresholds)
  if (!t || !Object.values(t).every((n) => typeof n === 'number' && Number.isFinite(n)))
    return bad(`thresholds must map names to numbers, got ${describe(o.thresholds)}`)
  const stall: Stall = { detector: o.detector, reason: o.reason, thresholds: { ...t } as Record<string, number> }
  if (o.kind === 'stop') return { ok: true, value: { ...stall, kind: 'stop' } }
  if (o.kind === 'feedback')
    return typeof o.text === 'string'
      ? { ok: true, value: { ...stall, kind: 'feedback', text: o.text } }
      : bad(`a feedback verdict carries its text, got ${describe(o.text)}`)
  return nonEmpty(o.question)
    ? { ok: true, value: { ...stall, kind: 'ask', question: o.question } }
    : bad(`an ask verdict carries its question, got ${describe(o.question)}`)
}

/** The shape of a projection (a context's or a compactor's): a list of messages and a token count. */
/** A list of messages that passed {@link checkProjection}, and how long it was then. */
export interface CheckedMessages {
  list: readonly unknown[]
  length: number
}

/**
 * @param before the messages of the run's last projection that passed: the leading messages that are
 * the very objects found there are not read again (a context provider that appends to its projection
 * hands back the same objects step after step, and reading each again costs more the longer the run)
 */
export function checkProjection(answer: unknown, before?: CheckedMessages): Checked<Projection> {
  const o = own(answer)
  if (!o) return bad(`a projection is an object, got ${describe(answer)}`)
  // Checked in place, not copied: the list grows with the run, and this runs at every step.
  if (!Array.isArray(o.messages) || !allMessages(o.messages, before)) return bad('messages must be a list of messages, each with a role')
  if (typeof o.tokens !== 'number' || !Number.isFinite(o.tokens) || o.tokens < 0)
    return bad(`tokens must be a non-negative number, got ${describe(o.tokens)}`)
  return { ok: true, value: answer as Projection }
}

function checkEvidence(value: unknown, passing: boolean): Evidence[] | undefined | string {
  if (value === undefined)
    return passing ? 'a passing verdict must list its evidence (an empty list when the contract asks for none)' : undefined
  if (!Array.isArray(value)) return `evidence must be a list, got ${describe(value)}`
  const out: Evidence[] = []
  for (const [i, item] of value.entries()) {
    const e = own(item)
    if (!e || !nonEmpty(e.kind) || !nonEmpty(e.ref)) return `evidence[${i}] must have a kind and a ref, got ${describe(item)}`
    if (e.seq !== undefined && !Number.isInteger(e.seq)) return `evidence[${i}].seq must be an integer, got ${describe(e.seq)}`
    out.push({ kind: e.kind, ref: e.ref, ...(e.seq !== undefined ? { seq: e.seq as number } : {}) })
  }
  return out
}

/** The object's own enumerable data, or undefined when it is not a plain object. Getters are read once. */
function own(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const out: Record<string, unknown> = Object.create(null)
  for (const key of Object.keys(value)) out[key] = (value as Record<string, unknown>)[key]
  return out
}

/**
 * Whether every item is a message. Items at the head of `list` that are the objects at the same place in
 * `before` passed already: comparing two references reads neither object, so a long projection costs a
 * pass over two arrays rather than a visit to every message. The same list again (changed in place)
 * counts only up to the length it had.
 */
function allMessages(list: readonly unknown[], before: CheckedMessages | undefined): boolean {
  let i = 0
  if (before) {
    const same = Math.min(list.length, before.length)
    if (list === before.list) i = same
    else while (i < same && list[i] === before.list[i]) i++
  }
  for (; i < list.length; i++) if (!isMessage(list[i])) return false
  return true
}

function isMessage(m: unknown): boolean {
  return m !== null && typeof m === 'object' && !Array.isArray(m) && typeof (m as { role?: unknown }).role === 'string'
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

export function bad<T>(problem: string): Checked<T> {
  return { ok: false, problem }
}

/**
 * The model's answer as plain data, made once, right after it passed `checkResponse`: every field read
 * once and copied, each call's arguments copied through JSON. A model plugin's objects can carry
 * `toJSON`, getters, non-enumerable keys or be Proxies, and so look different to the record (which
 * serialises), to the hash, to policy and to the tool. From the copy on, they all see the same data. A
 * call whose arguments cannot be copied (a cycle, a BigInt, a trap that throws) gets an `argsError`.
 */
export function plainResponse(response: ModelResponse): ModelResponse {
  const d = response.decision
  const usage = {
    inputTokens: Number(response.usage.inputTokens),
    outputTokens: Number(response.usage.outputTokens),
    costUsd: Number(response.usage.costUsd),
  }
  const model = response.model === undefined ? undefined : String(response.model)
  let decision: Decision
  if (d.kind === 'final') decision = { kind: 'final', text: String(d.text) }
  else if (d.kind === 'ask_user') decision = { kind: 'ask_user', question: String(d.question) }
  else {
    const calls = [...d.calls].map((c): ProposedCall => {
      const name = String(c.name)
      const callId = c.callId === undefined ? undefined : String(c.callId)
      const argsError = c.argsError === undefined ? undefined : String(c.argsError)
      // Absent fields stay absent (not `undefined` keys): the record reads like what the model said.
      const call = (args: unknown, problem: string | undefined): ProposedCall => ({
        name,
        args,
        ...(callId === undefined ? {} : { callId }),
        ...(problem === undefined ? {} : { argsError: problem }),
      })
      try {
        const text = JSON.stringify(c.args)
        return call(text === undefined ? undefined : JSON.parse(text), argsError)
      } catch (error) {
        return call(null, argsError ?? `the arguments cannot be read as JSON: ${(error as Error)?.message ?? error}`)
      }
    })
    decision = { kind: 'tool_calls', calls, ...(d.text === undefined ? {} : { text: String(d.text) }) }
  }
  const reasoning = plainReasoning(response.reasoning)
  return { decision, usage, ...(model === undefined ? {} : { model }), ...(reasoning === undefined ? {} : { reasoning }) }
}

/**
 * The provider's reasoning copied through JSON, like call arguments. Unlike them it cannot be shown to
 * the model as an error: a provider that gets it back changed refuses the next request, so a copy
 * that fails (or changes its shape) fails the call.
 */
function plainReasoning(reasoning: ModelResponse['reasoning']): ModelResponse['reasoning'] {
  if (reasoning === undefined) return undefined
  let copy: unknown
  try {
    copy = JSON.parse(JSON.stringify({ provider: reasoning.provider, blocks: reasoning.blocks }))
  } catch (error) {
    throw new CordageError('model_invalid_response', `the reasoning cannot be read as JSON: ${(error as Error)?.message ?? error}`)
  }
  const plain = copy as NonNullable<ModelResponse['reasoning']>
  if (typeof plain.provider !== 'string' || !Array.isArray(plain.blocks) || plain.blocks.length !== reasoning.blocks.length)
    throw new CordageError('model_invalid_response', 'the reasoning changes when copied as JSON (a block that is not plain data)')
  return plain
}
