/**
 * @module host/recorded-spending
 * What a run's own log records it spent (its model calls and compactions, and what each call reported
 * when it ended), and that spending with its child runs' counted once: the pieces the agents service's
 * `spent` (core/host/run-spending.ts) walks a run's tree with, for a thread's budgets (plugins/threads).
 */
import type { RunStatus, Usage } from '../contracts/data.ts'
import type { RunEvent } from '../contracts/events.ts'

/** What one run's log records: its own spending, each call's, and what it needs to find its children. */
export interface RecordedSpending {
  /** The agents that drove the run, in order (run/start, then each run/handoff): whose children it may have. */
  agents: string[]
  parent?: { runId: string; actionId: string }
  status: RunStatus
  /** Its own model calls and compactions. */
  own: Usage
  /** What each call reported when it ended (tool/end `usage`), by action id. */
  calls: Map<string, Usage>
  /** The actions that started (tool/start): only a call that ran can have started a child run. */
  started: string[]
}

const zero = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 })
const plus = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  costUsd: a.costUsd + b.costUsd,
})

/** Read a run's log for what it spent: the same events the reducer adds to `usage`, kept apart by call. */
export function recordedSpending(events: readonly RunEvent[]): RecordedSpending {
  const out: RecordedSpending = { agents: [], status: 'CREATED', own: zero(), calls: new Map(), started: [] }
  const started = new Set<string>()
  for (const event of events) {
    if (event.type === 'run/start') {
      const d = (event as RunEvent<'run/start'>).data
      out.agents.push(d.agent)
      if (d.parent) out.parent = { runId: d.parent.runId, actionId: d.parent.actionId }
      out.status = 'RUNNING'
    } else if (event.type === 'run/handoff') out.agents.push((event as RunEvent<'run/handoff'>).data.to)
    else if (event.type === 'run/paused' || event.type === 'run/end') out.status = (event as RunEvent<'run/end'>).data.status
    else if (event.type === 'run/resumed') out.status = 'RUNNING'
    else if (event.type === 'run/cancel-requested') out.status = 'CANCELLING'
    else if (event.type === 'step/model-response') out.own = plus(out.own, (event as RunEvent<'step/model-response'>).data.usage)
    else if (event.type === 'compaction/end') {
      const u = (event as RunEvent<'compaction/end'>).data.usage
      if (u) out.own = plus(out.own, u)
    } else if (event.type === 'tool/start' && event.actionId && !started.has(event.actionId)) {
      started.add(event.actionId)
      out.started.push(event.actionId)
    } else if (event.type === 'tool/end' && event.actionId) {
      const u = (event as RunEvent<'tool/end'>).data.usage
      if (u) out.calls.set(event.actionId, plus(out.calls.get(event.actionId) ?? zero(), u))
    }
  }
  return out
}

/**
 * A run's spending with its children's: its own, plus for each call the larger (per figure) of what
 * the call reported and what its child runs recorded. A child that ended before its call returned was
 * reported by the call (spawn_agent's `usage`) and is in its own log too: counted once. One that the
 * call never reported (the call was cut short by a cancel, a crash, a neighbour that ended the run, or
 * it waited on the child) counts by its log alone.
 */
export function withChildren(run: RecordedSpending, children: ReadonlyMap<string, Usage>): Usage {
  let total = run.own
  for (const id of new Set([...run.calls.keys(), ...children.keys()])) {
    const call = run.calls.get(id) ?? zero()
    const child = children.get(id) ?? zero()
    total = plus(total, {
      inputTokens: Math.max(call.inputTokens, child.inputTokens),
      outputTokens: Math.max(call.outputTokens, child.outputTokens),
      costUsd: Math.max(call.costUsd, child.costUsd),
    })
  }
  return total
}
