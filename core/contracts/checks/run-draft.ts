/**
 * @module checks/run-draft
 * The check of what a `run/before-start` handler hands back (core/contracts/phases.ts RunDraft): the
 * caller's task, budgets and thread unchanged; for a run asked to join a thread, a link to that very
 * thread, the claim of exactly that turn for this agent, and from turn 2 on the history of the turns
 * before it (core/contracts/checks/history.ts); or a refusal with a code a start may have. The kernel
 * records the copy this returns, never the handler's object. See core/contracts/check.ts.
 */
import type { ThreadLink, Usage } from '../data.ts'
import { Codes, type Code } from '../errors.ts'
import { StartRefusalCodes, type RunDraft } from '../phases.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'
import { checkHistory } from './history.ts'

const DraftKeys = ['task', 'budgets', 'threadAsked', 'thread', 'history', 'claim', 'refused']
const UsageKeys = ['inputTokens', 'outputTokens', 'costUsd'] as const

/** `answer` as a draft of run/start that `was` (the kernel's draft for `agent`) may become. */
export function checkRunDraft(answer: unknown, was: RunDraft, agent: string): Checked<RunDraft> {
  let o: Record<string, unknown> | undefined
  try {
    const text = JSON.stringify(answer)
    o = text === undefined ? undefined : own(JSON.parse(text))
  } catch (error) {
    return bad(`the draft is not plain JSON: ${(error as Error)?.message ?? error}`)
  }
  if (!o)
    return bad(`a run/before-start handler returns the draft of run/start ({ ...draft, thread, history, claim }), got ${describe(answer)}`)
  const extra = Object.keys(o).filter((k) => !DraftKeys.includes(k))
  if (extra.length) return bad(`the draft has the unknown key(s) ${extra.join(', ')}: it is { ${DraftKeys.join(', ')} }`)
  for (const key of ['task', 'budgets', 'threadAsked'] as const)
    if (JSON.stringify(o[key]) !== JSON.stringify(was[key])) return bad(`a run/before-start handler may not change ${key}`)
  const kept = { task: was.task, budgets: was.budgets, ...(was.threadAsked === undefined ? {} : { threadAsked: was.threadAsked }) }
  if (o.refused !== undefined) {
    const r = own(o.refused)
    if (!r || !StartRefusalCodes.includes(r.code as never) || !Object.hasOwn(Codes, r.code as string))
      return bad(`refused.code must be one of ${StartRefusalCodes.join(', ')}, got ${describe(r?.code ?? o.refused)}`)
    if (!nonEmpty(r.message)) return bad('refused.message must say why the run may not start')
    return { ok: true, value: { ...kept, refused: { code: r.code as Code, message: r.message } } }
  }
  if (was.threadAsked === undefined) {
    if (o.thread !== undefined || o.history !== undefined || o.claim !== undefined)
      return bad('no thread was asked for: thread, history and claim must stay unset')
    return { ok: true, value: kept }
  }
  if (o.thread === undefined) {
    if (o.history !== undefined || o.claim !== undefined) return bad('history and claim come with the thread link (thread), which is unset')
    return { ok: true, value: kept }
  }
  const link = checkLink(o.thread, was.threadAsked)
  if (!link.ok) return link
  const { id, turn } = link.value
  const c = own(o.claim)
  if (!c || Object.keys(c).length !== 3 || c.id !== id || c.turn !== turn || c.agent !== agent)
    return bad(`claim must be { id: ${JSON.stringify(id)}, turn: ${turn}, agent: ${JSON.stringify(agent)} }, got ${describe(o.claim)}`)
  const claim = { id, turn, agent }
  if (turn === 1) {
    if (o.history !== undefined) return bad('turn 1 has no turns before it: history must stay unset')
    return { ok: true, value: { ...kept, thread: link.value, claim } }
  }
  if (o.history === undefined) return bad(`a turn after the first needs the history it sees (history): turn ${turn} of thread ${id}`)
  const history = checkHistory(o.history, link.value)
  if (!history.ok) return history
  return { ok: true, value: { ...kept, thread: link.value, history: history.value, claim } }
}

function checkLink(value: unknown, asked: string): Checked<ThreadLink> {
  const o = own(value)
  if (!o) return bad(`thread must be { id, turn, previousRunId, usedBefore }, got ${describe(value)}`)
  const extra = Object.keys(o).filter((k) => !['id', 'turn', 'previousRunId', 'usedBefore'].includes(k))
  if (extra.length) return bad(`thread has the unknown key(s) ${extra.join(', ')}: it is { id, turn, previousRunId, usedBefore }`)
  if (o.id !== asked) return bad(`thread.id must be the thread asked for (${JSON.stringify(asked)}), got ${describe(o.id)}`)
  const turn = o.turn
  if (typeof turn !== 'number' || !Number.isSafeInteger(turn) || turn < 1)
    return bad(`thread.turn must be a whole number from 1, got ${describe(turn)}`)
  if (turn === 1 && o.previousRunId !== undefined) return bad('turn 1 has no run before it: thread.previousRunId must stay unset')
  if (turn > 1 && !nonEmpty(o.previousRunId))
    return bad(`thread.previousRunId must name the run of turn ${turn - 1}, got ${describe(o.previousRunId)}`)
  const u = own(o.usedBefore)
  if (!u || Object.keys(u).some((k) => !(UsageKeys as readonly string[]).includes(k)))
    return bad(`thread.usedBefore must be { inputTokens, outputTokens, costUsd }, got ${describe(o.usedBefore)}`)
  for (const key of UsageKeys) {
    const n = u[key]
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
      return bad(`thread.usedBefore.${key} must be a number >= 0, got ${describe(n)}`)
  }
  const usedBefore: Usage = { inputTokens: u.inputTokens as number, outputTokens: u.outputTokens as number, costUsd: u.costUsd as number }
  return { ok: true, value: { id: asked, turn, ...(turn > 1 ? { previousRunId: o.previousRunId as string } : {}), usedBefore } }
}
