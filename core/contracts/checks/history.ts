/**
 * @module checks/history
 * The check of a `thread/history` a `run/before-start` handler hands the kernel (core/contracts/phases.ts):
 * what a turn of a thread sees of the turns before it. Each entry is a transcript entry
 * (core/contracts/state.ts) of an earlier turn, marked with it (`turn: 't1'`), its action ids marked
 * too (`t1.s1.a1`), so nothing in it can pass for this turn's own calls, results or messages.
 */
import type { RunEventMap } from '../events.ts'
import type { ThreadLink } from '../data.ts'
import { MaxHistoryBytes } from '../phases.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

type History = RunEventMap['thread/history']

const Keys: Record<string, readonly string[]> = {
  user: ['kind', 'text', 'seq', 'turn'],
  feedback: ['kind', 'text', 'seq', 'turn'],
  observation: ['kind', 'actionId', 'tool', 'text', 'ok', 'seq', 'turn', 'dryRun'],
  assistant: ['kind', 'decision', 'actionIds', 'seq', 'turn', 'reasoning'],
}

/** `value` (plain JSON) as the history turn `link.turn` sees: from the run of the turn before, entries of earlier turns only, within {@link MaxHistoryBytes}. */
export function checkHistory(value: unknown, link: ThreadLink): Checked<History> {
  const o = own(value)
  if (!o) return bad(`history must be { from, turns, entries, shortened?, dropped? }, got ${describe(value)}`)
  const extra = Object.keys(o).filter((k) => !['from', 'turns', 'entries', 'shortened', 'dropped'].includes(k))
  if (extra.length) return bad(`history has the unknown key(s) ${extra.join(', ')}: it is { from, turns, entries, shortened, dropped }`)
  if (o.from !== link.previousRunId)
    return bad(`history.from must be the run of the turn before (${link.previousRunId}), got ${describe(o.from)}`)
  if (!count(o.turns) || (o.turns as number) >= link.turn)
    return bad(`history.turns must be a whole number from 0 to ${link.turn - 1}, got ${describe(o.turns)}`)
  for (const key of ['shortened', 'dropped'] as const)
    if (o[key] !== undefined && !count(o[key])) return bad(`history.${key} must be a whole number from 0, got ${describe(o[key])}`)
  if (!Array.isArray(o.entries)) return bad(`history.entries must be a list of transcript entries, got ${describe(o.entries)}`)
  const bytes = Buffer.byteLength(JSON.stringify(o.entries), 'utf8')
  if (bytes > MaxHistoryBytes) return bad(`history is ${bytes} bytes of JSON, more than the ${MaxHistoryBytes} a thread/history may carry`)
  for (const [i, entry] of o.entries.entries()) {
    const problem = entryProblem(entry, link.turn)
    if (problem) return bad(`history.entries[${i}] ${problem}`)
  }
  return { ok: true, value: o as unknown as History }
}

/** What is wrong with `value` as an entry of a turn before turn `before`, or undefined. */
function entryProblem(value: unknown, before: number): string | undefined {
  const e = own(value)
  const kind = e?.kind
  if (!e || typeof kind !== 'string' || !Object.hasOwn(Keys, kind))
    return `is not a transcript entry: an object whose kind is user, assistant, observation or feedback, got ${describe(value)}`
  const extra = Object.keys(e).filter((k) => !Keys[kind].includes(k))
  if (extra.length) return `is not a transcript entry: a ${kind} entry has no key(s) ${extra.join(', ')}`
  if (!count(e.seq)) return `is not a transcript entry: seq must be a whole number from 0, got ${describe(e.seq)}`
  const shape = shapeProblem(e, kind)
  if (shape) return `is not a transcript entry: ${shape}`
  const turn = typeof e.turn === 'string' ? /^t([1-9]\d{0,8})$/.exec(e.turn) : null
  if (!turn) return `names no turn of the thread (turn: "t1", ...), got ${describe(e.turn)}`
  if (Number(turn[1]) >= before) return `is of turn ${e.turn}: the history holds earlier turns only (t1 to t${before - 1})`
  const ids = kind === 'observation' ? [e.actionId as string] : kind === 'assistant' ? (e.actionIds as string[]) : []
  const unmarked = ids.find((id) => !id.startsWith(`${e.turn}.`))
  if (unmarked !== undefined)
    return `is of turn ${e.turn}, but its action id ${JSON.stringify(unmarked)} is not marked with it (${e.turn}.…)`
  return undefined
}

function shapeProblem(e: Record<string, unknown>, kind: string): string | undefined {
  if (kind === 'user' || kind === 'feedback') return typeof e.text === 'string' ? undefined : `a ${kind} entry has a text`
  if (kind === 'observation') {
    if (!nonEmpty(e.actionId) || typeof e.tool !== 'string' || typeof e.text !== 'string' || typeof e.ok !== 'boolean')
      return 'an observation has an actionId, a tool, a text and ok'
    return e.dryRun === undefined || typeof e.dryRun === 'boolean' ? undefined : "an observation's dryRun is true or false"
  }
  if (!Array.isArray(e.actionIds) || !e.actionIds.every(nonEmpty)) return 'an assistant entry has a list of action ids'
  if (e.reasoning !== undefined) {
    const r = own(e.reasoning)
    if (!r || typeof r.provider !== 'string' || !Array.isArray(r.blocks)) return "an assistant entry's reasoning is { provider, blocks }"
  }
  const d = own(e.decision)
  if (d?.kind === 'final') return typeof d.text === 'string' ? undefined : 'a final answer has a text'
  if (d?.kind === 'ask_user') return typeof d.question === 'string' ? undefined : 'a question to the user has a question'
  if (d?.kind === 'tool_calls' && Array.isArray(d.calls) && d.calls.every((c) => typeof own(c)?.name === 'string'))
    return d.text === undefined || typeof d.text === 'string' ? undefined : "a decision's text is a string"
  return 'an assistant entry has a decision: final { text }, ask_user { question } or tool_calls { calls: [{ name, args }] }'
}

function count(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}
