/**
 * Assertions on a run, as the project's own tests make them. Each failure says what the run did instead
 * (its status and reason, the events it wrote), so a red test explains itself.
 */
import { AssertionError } from 'node:assert'
import type { RunEvent, RunState, RunStatus } from '../index.ts'
import type { TestRun } from './harness.ts'

type RunLike = TestRun | RunState

const stateOf = (run: RunLike): RunState => ('state' in run ? run.state : run)

function fail(message: string, actual: unknown, expected: unknown, operator: string, at: Function): never {
  throw new AssertionError({ message, actual, expected, operator, stackStartFn: at })
}

function described(state: RunState): string {
  return `${state.status}${state.failureCode ? ` (${state.failureCode})` : ''}${state.reason ? `: ${state.reason}` : ''}`
}

/** The run ended (or paused) with this status. */
export function expectStatus(run: RunLike, status: RunStatus): void {
  const state = stateOf(run)
  if (state.status !== status)
    fail(`run ${state.runId} is ${described(state)}, expected ${status}`, state.status, status, 'expectStatus', expectStatus)
}

/** The run did not complete, and failed with this code (`tool_failed`, `budget_exceeded`, a verifier's code...). */
export function expectFailure(run: RunLike, code: string): void {
  const state = stateOf(run)
  if (state.status === 'COMPLETED')
    fail(`run ${state.runId} COMPLETED, expected a failure with code ${code}`, state.status, code, 'expectFailure', expectFailure)
  if (state.failureCode !== code)
    fail(
      `run ${state.runId} is ${described(state)}, expected failure code ${code}`,
      state.failureCode,
      code,
      'expectFailure',
      expectFailure,
    )
}

/** The run started exactly `count` calls with side effects (ledger entries), of `tool` when given. */
export function expectSideEffects(run: TestRun, count: number, tool?: string): void {
  // A store that cannot list its ledger would make every count of zero pass: say so instead.
  if (!run.effects)
    fail(
      `run ${run.state.runId}: the agent's store cannot list its ledger (no effectsOf), so side effects cannot be counted; test on store-memory or store-sqlite`,
      null,
      count,
      'expectSideEffects',
      expectSideEffects,
    )
  const effects = tool ? run.effects.filter((e) => e.tool === tool) : run.effects
  if (effects.length !== count) {
    const seen = effects.map((e) => `${e.tool} (${e.status})`).join(', ') || 'none'
    fail(
      `run ${run.state.runId} made ${effects.length} call(s) with side effects${tool ? ` of ${tool}` : ''}, expected ${count}: ${seen}`,
      effects.length,
      count,
      'expectSideEffects',
      expectSideEffects,
    )
  }
}

/** An event to find: its type, or its type with the tool (or action) it is about. */
export type EventPattern = string | { type: string; tool?: string; actionId?: string }

/** The tool an event is about: its own `tool`, or that of the action it belongs to (tool/decision has none). */
function toolsOf(events: RunEvent[]): (event: RunEvent) => string | undefined {
  const byAction = new Map<string, string>()
  for (const e of events) if (e.type === 'tool/proposed' && e.actionId) byAction.set(e.actionId, e.data.tool)
  return (e) =>
    ((e.data as { tool?: unknown } | undefined)?.tool as string | undefined) ?? (e.actionId ? byAction.get(e.actionId) : undefined)
}

function matches(event: RunEvent, pattern: EventPattern, toolOf: (event: RunEvent) => string | undefined): boolean {
  const p = typeof pattern === 'string' ? { type: pattern } : pattern
  if (event.type !== p.type) return false
  if (p.actionId !== undefined && event.actionId !== p.actionId) return false
  if (p.tool !== undefined && toolOf(event) !== p.tool) return false
  return true
}

/**
 * These events happened in this order (others may come between them): a subsequence of the run's log.
 * `expectEventOrder(run, ['tool/decision', { type: 'tool/end', tool: 'renew_loan' }, 'verify/end', 'run/end'])`
 */
export function expectEventOrder(run: TestRun | RunEvent[], patterns: EventPattern[]): void {
  const events = Array.isArray(run) ? run : run.events
  const toolOf = toolsOf(events)
  let from = 0
  for (const [i, pattern] of patterns.entries()) {
    const at = events.findIndex((e, j) => j >= from && matches(e, pattern, toolOf))
    if (at < 0) {
      const shown = JSON.stringify(pattern)
      const log = events.map((e) => `${e.seq} ${e.type}${toolOf(e) ? ` ${toolOf(e)}` : ''}`)
      fail(
        `event ${i + 1} of the expected order, ${shown}, does not come ${i ? `after ${JSON.stringify(patterns[i - 1])}` : 'in the run'}; the run wrote:\n  ${log.join('\n  ')}`,
        log,
        patterns,
        'expectEventOrder',
        expectEventOrder,
      )
    }
    from = at + 1
  }
}

/** The events of one type, in order (their `data` typed by the event). */
export function eventsOf<T extends RunEvent['type']>(run: TestRun | RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  const events = Array.isArray(run) ? run : run.events
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type)
}
