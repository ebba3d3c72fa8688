/**
 * core/contracts/checks/: what deciding services answer is checked strictly, field by field, and the loop acts
 * on a clean copy built from the answer's own properties.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Checked } from '../../core/contracts/check.ts'
import { checkGuardVerdict } from '../../core/contracts/checks/guardrail.ts'
import { plainResponse } from '../../core/contracts/checks/model.ts'
import { checkPolicyDecision } from '../../core/contracts/checks/policy.ts'
import { checkProgressVerdict } from '../../core/contracts/checks/progress.ts'
import { checkProjection } from '../../core/contracts/checks/context.ts'
import { checkVerifyResult } from '../../core/contracts/checks/verifier.ts'
import type { ModelResponse } from '../../core/contracts/services/model.ts'

const problem = <T>(c: Checked<T>) => (c.ok ? undefined : c.problem)
const value = <T>(c: Checked<T>) => {
  assert.ok(c.ok, c.ok ? '' : c.problem)
  return c.value
}

describe('checkPolicyDecision', () => {
  const good = { verdict: 'allow', ruleId: 'read-only', reason: 'reads only' }

  it('passes a decision and copies only its known fields', () => {
    assert.deepEqual(value(checkPolicyDecision({ ...good, extra: 1 })), good)
    assert.deepEqual(value(checkPolicyDecision({ ...good, verdict: 'ask', approvers: ['alice', 'bob'] })), {
      ...good,
      verdict: 'ask',
      approvers: ['alice', 'bob'],
    })
    assert.deepEqual(value(checkPolicyDecision({ ...good, verdict: 'deny', reason: '' })), { ...good, verdict: 'deny', reason: '' })
  })

  it('copies the approvers, so a later change by the plugin does not reach the decision', () => {
    const approvers = ['alice']
    const checked = value(checkPolicyDecision({ ...good, verdict: 'ask', approvers }))
    approvers.push('mallory')
    assert.deepEqual(checked.approvers, ['alice'])
  })

  it('refuses what is not a decision, saying what is wrong', () => {
    assert.equal(problem(checkPolicyDecision(null)), 'a policy decision is an object, got null')
    assert.equal(problem(checkPolicyDecision(undefined)), 'a policy decision is an object, got nothing')
    assert.equal(problem(checkPolicyDecision(['allow'])), 'a policy decision is an object, got ["allow"]')
    assert.equal(problem(checkPolicyDecision('allow')), 'a policy decision is an object, got "allow"')
    assert.equal(problem(checkPolicyDecision({ ...good, verdict: 'permit' })), 'verdict must be allow, ask or deny, got "permit"')
    assert.equal(problem(checkPolicyDecision({ ...good, verdict: true })), 'verdict must be allow, ask or deny, got true')
    assert.equal(problem(checkPolicyDecision({ ...good, ruleId: '' })), 'ruleId must be a non-empty string, got ""')
    assert.equal(problem(checkPolicyDecision({ ...good, ruleId: 7 })), 'ruleId must be a non-empty string, got 7')
    assert.equal(problem(checkPolicyDecision({ ...good, reason: undefined })), 'reason must be a string, got nothing')
    assert.equal(problem(checkPolicyDecision({ ...good, approvers: 'alice' })), 'approvers must be a list of names, got "alice"')
    assert.equal(problem(checkPolicyDecision({ ...good, approvers: ['alice', ''] })), 'approvers must be a list of names, got ["alice",""]')
  })

  it('reads own properties only: an inherited verdict is no verdict', () => {
    const inherited = Object.create({ verdict: 'allow', ruleId: 'r', reason: 'x' })
    assert.equal(problem(checkPolicyDecision(inherited)), 'verdict must be allow, ask or deny, got nothing')
  })

  it('reads a getter once', () => {
    let reads = 0
    const answer = {
      get verdict() {
        reads++
        return reads === 1 ? 'deny' : 'allow'
      },
      ruleId: 'r',
      reason: 'x',
    }
    assert.equal(value(checkPolicyDecision(answer)).verdict, 'deny')
    assert.equal(reads, 1)
  })
})

describe('checkPolicyDecision: a constrained allow', () => {
  const allow = (constraints: unknown) => checkPolicyDecision({ verdict: 'allow', ruleId: 'r', reason: 'x', constraints })

  it('passes a pathPrefix relative to the workspace root', () => {
    for (const pathPrefix of ['src/', 'src', 'a/b/c.ts', './src', 'docs/C:/x'])
      assert.deepEqual(value(allow({ pathPrefix })).constraints, { pathPrefix })
  })

  it('refuses an absolute pathPrefix, POSIX or Windows (a drive too): the tools hold it relative to the workspace root', () => {
    for (const pathPrefix of ['/', '/etc', '/home/me/project/src', '\\server\\share', '\\Windows', 'C:\\Windows', 'c:/x', 'C:', 'D:src'])
      assert.equal(
        problem(allow({ pathPrefix })),
        `constraints.pathPrefix must be relative to the workspace root (such as "src/"), got ${JSON.stringify(pathPrefix)}`,
      )
  })
})

describe('checkGuardVerdict', () => {
  it('passes pass, block and redact with what each needs', () => {
    assert.deepEqual(value(checkGuardVerdict({ action: 'pass', guard: 'ignored' })), { action: 'pass' })
    assert.deepEqual(value(checkGuardVerdict({ action: 'block', guard: 'secrets', reason: 'a key', text: 'x' })), {
      action: 'block',
      guard: 'secrets',
      reason: 'a key',
    })
    assert.deepEqual(value(checkGuardVerdict({ action: 'redact', guard: 'pii', reason: 'card', text: '****' })), {
      action: 'redact',
      guard: 'pii',
      reason: 'card',
      text: '****',
    })
    assert.deepEqual(value(checkGuardVerdict({ action: 'redact', guard: 'pii', reason: '', text: '' })), {
      action: 'redact',
      guard: 'pii',
      reason: '',
      text: '',
    })
  })

  it('refuses the rest', () => {
    assert.equal(problem(checkGuardVerdict(1)), 'a guardrail verdict is an object, got 1')
    assert.equal(problem(checkGuardVerdict({ action: 'allow' })), 'action must be pass, block or redact, got "allow"')
    assert.equal(problem(checkGuardVerdict({ action: 'block', guard: '', reason: 'x' })), 'guard must name the guard that tripped, got ""')
    assert.equal(problem(checkGuardVerdict({ action: 'block', guard: 'g' })), 'reason must be a string, got nothing')
    assert.equal(
      problem(checkGuardVerdict({ action: 'redact', guard: 'g', reason: 'r' })),
      'a redact verdict carries the cleaned text, got nothing',
    )
    assert.equal(
      problem(checkGuardVerdict({ action: 'redact', guard: 'g', reason: 'r', text: 5 })),
      'a redact verdict carries the cleaned text, got 5',
    )
  })
})

describe('checkVerifyResult', () => {
  it('passes ok with its evidence, copied field by field', () => {
    assert.deepEqual(value(checkVerifyResult({ ok: true, evidence: [{ kind: 'source', ref: 'policy/refunds', seq: 10, extra: 1 }] })), {
      ok: true,
      evidence: [{ kind: 'source', ref: 'policy/refunds', seq: 10 }],
    })
    assert.deepEqual(value(checkVerifyResult({ ok: true, evidence: [] })), { ok: true, evidence: [] })
    assert.deepEqual(value(checkVerifyResult({ ok: true, evidence: [{ kind: 'k', ref: 'r' }] })), {
      ok: true,
      evidence: [{ kind: 'k', ref: 'r' }],
    })
  })

  it('refuses ok that is not a boolean, and ok without evidence', () => {
    assert.equal(problem(checkVerifyResult({ ok: 'false', evidence: [] })), 'ok must be true or false, got "false"')
    assert.equal(problem(checkVerifyResult({ ok: 1, evidence: [] })), 'ok must be true or false, got 1')
    assert.equal(
      problem(checkVerifyResult({ ok: true })),
      'a passing verdict must list its evidence (an empty list when the contract asks for none)',
    )
    assert.equal(problem(checkVerifyResult(null)), 'a verifier verdict is an object, got null')
  })

  it('refuses evidence that is not a list of kinds and refs with integer seqs', () => {
    assert.equal(problem(checkVerifyResult({ ok: true, evidence: 'policy' })), 'evidence must be a list, got "policy"')
    assert.equal(
      problem(checkVerifyResult({ ok: true, evidence: [{ kind: 'k', ref: 'r' }, { kind: 'k' }] })),
      'evidence[1] must have a kind and a ref, got {"kind":"k"}',
    )
    assert.equal(
      problem(checkVerifyResult({ ok: true, evidence: [{ kind: '', ref: 'r' }] })),
      'evidence[0] must have a kind and a ref, got {"kind":"","ref":"r"}',
    )
    assert.equal(problem(checkVerifyResult({ ok: true, evidence: ['r'] })), 'evidence[0] must have a kind and a ref, got "r"')
    assert.equal(
      problem(checkVerifyResult({ ok: true, evidence: [{ kind: 'k', ref: 'r', seq: 1.5 }] })),
      'evidence[0].seq must be an integer, got 1.5',
    )
    assert.equal(
      problem(checkVerifyResult({ ok: true, evidence: [{ kind: 'k', ref: 'r', seq: '3' }] })),
      'evidence[0].seq must be an integer, got "3"',
    )
  })

  it('passes a failing verdict with a verification code, reason and repairable flag', () => {
    const failing = { ok: false, code: 'missing_evidence', reason: 'no citation', repairable: true }
    assert.deepEqual(value(checkVerifyResult(failing)), failing)
    assert.deepEqual(
      value(
        checkVerifyResult({
          ...failing,
          code: 'verification_failed',
          repairable: false,
          feedback: 'cite it',
          evidence: [{ kind: 'k', ref: 'r' }],
        }),
      ),
      {
        ok: false,
        code: 'verification_failed',
        reason: 'no citation',
        repairable: false,
        feedback: 'cite it',
        evidence: [{ kind: 'k', ref: 'r' }],
      },
    )
    assert.deepEqual(value(checkVerifyResult({ ...failing, feedback: '' })), { ...failing, feedback: '' })
  })

  it('refuses a failing verdict without what it needs', () => {
    const failing = { ok: false, code: 'missing_evidence', reason: 'no citation', repairable: true }
    assert.equal(
      problem(checkVerifyResult({ ...failing, code: 'tool_failed' })),
      'a failing verdict\'s code must be missing_evidence or verification_failed, got "tool_failed"',
    )
    assert.equal(
      problem(checkVerifyResult({ ...failing, code: undefined })),
      "a failing verdict's code must be missing_evidence or verification_failed, got nothing",
    )
    assert.equal(problem(checkVerifyResult({ ...failing, reason: 5 })), 'reason must be a string, got 5')
    assert.equal(problem(checkVerifyResult({ ...failing, repairable: 'yes' })), 'repairable must be true or false, got "yes"')
    assert.equal(problem(checkVerifyResult({ ...failing, feedback: 3 })), 'feedback must be a string, got 3')
    assert.equal(problem(checkVerifyResult({ ...failing, evidence: {} })), 'evidence must be a list, got {}')
  })
})

describe('checkProgressVerdict', () => {
  const stall = { detector: 'repeat', reason: 'same call 3 times', thresholds: { repeats: 3 } }

  it('passes continue, feedback, ask and stop with what each needs', () => {
    assert.deepEqual(value(checkProgressVerdict({ kind: 'continue', detector: 'x' })), { kind: 'continue' })
    assert.deepEqual(value(checkProgressVerdict({ ...stall, kind: 'stop', extra: 1 })), { ...stall, kind: 'stop' })
    assert.deepEqual(value(checkProgressVerdict({ ...stall, kind: 'feedback', text: 'try another tool' })), {
      ...stall,
      kind: 'feedback',
      text: 'try another tool',
    })
    assert.deepEqual(value(checkProgressVerdict({ ...stall, kind: 'feedback', text: '' })), { ...stall, kind: 'feedback', text: '' })
    assert.deepEqual(value(checkProgressVerdict({ ...stall, kind: 'ask', question: 'go on?' })), {
      ...stall,
      kind: 'ask',
      question: 'go on?',
    })
    assert.deepEqual(value(checkProgressVerdict({ ...stall, thresholds: {}, kind: 'stop' })), { ...stall, thresholds: {}, kind: 'stop' })
  })

  it('copies the thresholds', () => {
    const thresholds = { repeats: 3 }
    const checked = value(checkProgressVerdict({ ...stall, thresholds, kind: 'stop' })) as { thresholds: Record<string, number> }
    thresholds.repeats = 99
    assert.deepEqual(checked.thresholds, { repeats: 3 })
  })

  it('refuses the rest', () => {
    assert.equal(problem(checkProgressVerdict('stop')), 'a progress verdict is an object, got "stop"')
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'halt' })), 'kind must be continue, feedback, ask or stop, got "halt"')
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'stop', detector: '' })), 'detector must name the detector, got ""')
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'stop', reason: null })), 'reason must be a string, got null')
    assert.equal(
      problem(checkProgressVerdict({ ...stall, kind: 'stop', thresholds: undefined })),
      'thresholds must map names to numbers, got nothing',
    )
    assert.equal(
      problem(checkProgressVerdict({ ...stall, kind: 'stop', thresholds: { a: '3' } })),
      'thresholds must map names to numbers, got {"a":"3"}',
    )
    assert.equal(
      problem(checkProgressVerdict({ ...stall, kind: 'stop', thresholds: { a: Infinity } })),
      'thresholds must map names to numbers, got {"a":null}',
    )
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'feedback' })), 'a feedback verdict carries its text, got nothing')
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'ask', question: '' })), 'an ask verdict carries its question, got ""')
    assert.equal(problem(checkProgressVerdict({ ...stall, kind: 'ask' })), 'an ask verdict carries its question, got nothing')
  })
})

describe('checkProjection', () => {
  it('passes messages with roles and a token count', () => {
    const projection = { messages: [{ role: 'user', content: 'hi' }], tokens: 3 }
    assert.equal(value(checkProjection(projection)), projection)
    assert.ok(checkProjection({ messages: [], tokens: 0 }).ok)
  })

  it('refuses the rest', () => {
    assert.equal(problem(checkProjection(undefined)), 'a projection is an object, got nothing')
    assert.equal(problem(checkProjection({ messages: 'hi', tokens: 1 })), 'messages must be a list of messages, each with a role')
    assert.equal(
      problem(checkProjection({ messages: [{ content: 'hi' }], tokens: 1 })),
      'messages must be a list of messages, each with a role',
    )
    assert.equal(problem(checkProjection({ messages: [null], tokens: 1 })), 'messages must be a list of messages, each with a role')
    assert.equal(
      problem(checkProjection({ messages: [Object.assign(['user'], { role: 'user' })], tokens: 1 })),
      'messages must be a list of messages, each with a role',
    )
    assert.equal(problem(checkProjection({ messages: ['user'], tokens: 1 })), 'messages must be a list of messages, each with a role')
    assert.equal(
      problem(checkProjection({ messages: [Object.assign(() => 'user', { role: 'user' })], tokens: 1 })),
      'messages must be a list of messages, each with a role',
    )
    assert.equal(problem(checkProjection({ messages: [{ role: 1 }], tokens: 1 })), 'messages must be a list of messages, each with a role')
    assert.equal(problem(checkProjection({ messages: [], tokens: -1 })), 'tokens must be a non-negative number, got -1')
    assert.equal(problem(checkProjection({ messages: [], tokens: NaN })), 'tokens must be a non-negative number, got null')
    assert.equal(problem(checkProjection({ messages: [], tokens: '3' })), 'tokens must be a non-negative number, got "3"')
  })

  it('reads again only what is not the very message found at its place in the last projection that passed', () => {
    const a = { role: 'system', text: 's' }
    const b = { role: 'user', text: 'u' }
    const before = { list: [a, b], length: 2 }
    const bad = 'messages must be a list of messages, each with a role'
    // A message that passed is not read again: a getter on it would count the reads.
    let reads = 0
    const watched = {
      get role() {
        reads++
        return 'tool'
      },
    }
    const last = { list: [a, watched], length: 2 }
    assert.ok(checkProjection({ messages: [a, watched, b], tokens: 3 }, last).ok)
    assert.equal(reads, 0)
    // Whatever is new is checked: appended, put in the place of another, or behind one that changed.
    assert.equal(problem(checkProjection({ messages: [a, b, { text: 'no role' }], tokens: 3 }, before)), bad)
    assert.equal(problem(checkProjection({ messages: [a, { text: 'no role' }], tokens: 2 }, before)), bad)
    assert.equal(problem(checkProjection({ messages: [{ role: 'user' }, b, {}], tokens: 3 }, before)), bad)
    // The same list, grown in place since it passed: what lies past the length it had is checked.
    const list: unknown[] = [a, b]
    const grown = { list, length: 2 }
    list.push({ content: 'no role' })
    assert.equal(problem(checkProjection({ messages: list, tokens: 3 }, grown)), bad)
  })
})

describe('how problems show a value', () => {
  it('shortens long values, and shows what JSON cannot', () => {
    const long = 'x'.repeat(100)
    assert.equal(
      problem(checkPolicyDecision({ verdict: long })),
      `verdict must be allow, ask or deny, got ${JSON.stringify(long).slice(0, 80)}…`,
    )
    const eighty = 'y'.repeat(78)
    assert.equal(problem(checkPolicyDecision({ verdict: eighty })), `verdict must be allow, ask or deny, got "${eighty}"`)
    const fn = () => 1
    assert.equal(problem(checkPolicyDecision({ verdict: fn })), `verdict must be allow, ask or deny, got ${String(fn)}`)
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    assert.equal(problem(checkPolicyDecision({ verdict: cycle })), 'verdict must be allow, ask or deny, got [object Object]')
    assert.equal(problem(checkPolicyDecision({ verdict: 10n })), 'verdict must be allow, ask or deny, got 10')
  })
})

describe('plainResponse', () => {
  const usage = { inputTokens: 3, outputTokens: 4, costUsd: 0.5 }
  const plain = (response: unknown) => plainResponse(response as ModelResponse)

  it('copies a final answer and a question field by field, as strings, with the usage as numbers', () => {
    assert.deepEqual(plain({ decision: { kind: 'final', text: 'done', extra: 1 }, usage }), {
      decision: { kind: 'final', text: 'done' },
      usage,
    })
    assert.deepEqual(plain({ decision: { kind: 'ask_user', question: 'which?' }, usage, model: 'm-1' }), {
      decision: { kind: 'ask_user', question: 'which?' },
      usage,
      model: 'm-1',
    })
    const odd = plain({ decision: { kind: 'final', text: 7 }, usage: { inputTokens: '3', outputTokens: '4', costUsd: '0.5' }, model: 9 })
    assert.deepEqual(odd, { decision: { kind: 'final', text: '7' }, usage, model: '9' })
    assert.equal(
      Object.hasOwn(plain({ decision: { kind: 'final', text: '' }, usage }), 'model'),
      false,
      'no model key when the model said none',
    )
  })

  it('copies tool calls: names and ids as strings, arguments through JSON, absent fields absent', () => {
    const args = { q: 'x', n: [1, { deep: true }] }
    const out = plain({
      decision: {
        kind: 'tool_calls',
        text: 'calling',
        calls: [
          { name: 'search', args, callId: 'c1' },
          { name: 'noop', args: {} },
        ],
      },
      usage,
    })
    assert.deepEqual(out.decision, {
      kind: 'tool_calls',
      text: 'calling',
      calls: [
        { name: 'search', args, callId: 'c1' },
        { name: 'noop', args: {} },
      ],
    })
    if (out.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.notEqual(out.decision.calls[0].args, args, "a copy, not the model plugin's object")
    args.q = 'changed'
    assert.deepEqual(out.decision.calls[0].args, { q: 'x', n: [1, { deep: true }] })
    assert.deepEqual(Object.keys(out.decision.calls[1]), ['name', 'args'])
    const bare = plain({ decision: { kind: 'tool_calls', calls: [{ name: 5, args: { a: 1 }, callId: 6 }] }, usage })
    assert.deepEqual(bare.decision, { kind: 'tool_calls', calls: [{ name: '5', args: { a: 1 }, callId: '6' }] })
    assert.equal(Object.hasOwn(bare.decision, 'text'), false)
    const numbered = plain({ decision: { kind: 'tool_calls', text: 1, calls: [] }, usage })
    assert.deepEqual(numbered.decision, { kind: 'tool_calls', text: '1', calls: [] })
  })

  it('reads arguments once, through toJSON and getters, and drops what JSON does not keep', () => {
    let reads = 0
    const args = {
      get amount() {
        reads++
        return reads === 1 ? 10 : 1_000_000
      },
      hidden: undefined,
      toString: () => 'x',
    }
    const out = plain({ decision: { kind: 'tool_calls', calls: [{ name: 'pay', args }] }, usage })
    if (out.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.deepEqual(out.decision.calls[0].args, { amount: 10 })
    const viaToJSON = plain({ decision: { kind: 'tool_calls', calls: [{ name: 'pay', args: { toJSON: () => ({ amount: 1 }) } }] }, usage })
    if (viaToJSON.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.deepEqual(viaToJSON.decision.calls[0].args, { amount: 1 })
    const none = plain({ decision: { kind: 'tool_calls', calls: [{ name: 'pay', args: undefined }] }, usage })
    if (none.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.equal(none.decision.calls[0].args, undefined)
    assert.equal(none.decision.calls[0].argsError, undefined)
  })

  it("marks arguments that cannot be copied with an argsError, and keeps the model's own argsError first", () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    const out = plain({
      decision: {
        kind: 'tool_calls',
        calls: [
          { name: 'a', args: cycle },
          { name: 'b', args: { n: 1n } },
          { name: 'c', args: cycle, argsError: 'not JSON' },
          { name: 'd', args: {}, argsError: 42 },
        ],
      },
      usage,
    })
    if (out.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    const [a, b, c, d] = out.decision.calls
    assert.equal(a.args, null)
    assert.match(a.argsError ?? '', /^the arguments cannot be read as JSON: .*circular/i)
    assert.equal(b.args, null)
    assert.match(b.argsError ?? '', /^the arguments cannot be read as JSON: .*BigInt/)
    assert.deepEqual([c.args, c.argsError], [null, 'not JSON'])
    assert.deepEqual([d.args, d.argsError], [{}, '42'])
    const thrower = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap')
        },
      },
    )
    const trapped = plain({ decision: { kind: 'tool_calls', calls: [{ name: 'e', args: thrower }] }, usage })
    if (trapped.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.equal(trapped.decision.calls[0].argsError, 'the arguments cannot be read as JSON: trap')
    const odd = plain({
      decision: {
        kind: 'tool_calls',
        calls: [
          {
            name: 'f',
            args: {
              toJSON() {
                throw 'plain'
              },
            },
          },
        ],
      },
      usage,
    })
    if (odd.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.equal(odd.decision.calls[0].argsError, 'the arguments cannot be read as JSON: plain')
    const nothing = plain({
      decision: {
        kind: 'tool_calls',
        calls: [
          {
            name: 'g',
            args: {
              toJSON() {
                throw null
              },
            },
          },
        ],
      },
      usage,
    })
    if (nothing.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.equal(nothing.decision.calls[0].argsError, 'the arguments cannot be read as JSON: null')
  })

  it('copies the list of calls, so the model plugin cannot change it afterwards', () => {
    const calls = [{ name: 'a', args: {} }]
    const out = plain({ decision: { kind: 'tool_calls', calls }, usage })
    calls.push({ name: 'b', args: {} })
    if (out.decision.kind !== 'tool_calls') return assert.fail('tool calls')
    assert.equal(out.decision.calls.length, 1)
  })
})
