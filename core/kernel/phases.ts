/**
 * @module phases
 * Running a phase's handlers for one run (core/contracts/phases.ts lists the phases and their modes):
 * the run's agent's own handlers, in plugin order, each bounded in time like a service
 * (`serviceTimeouts.phases`, the deadline, cancellation). A phase with no handler costs one lookup.
 * A handler that throws or returns what the phase does not take is `phase_failed`, and the caller
 * decides what that means where it is (refuse the action, or end the run); one that overruns ends the
 * run with `service_timeout`, as any service the loop asks.
 */
import { CordageError } from '../contracts/errors.ts'
import { describe } from '../contracts/check.ts'
import type { PhaseInfo, PhaseName, PhaseValue } from '../contracts/phases.ts'
import type { ActionState } from '../contracts/state.ts'
import { deepFreeze } from '../kit/freeze.ts'
import { isThenable } from './bounded.ts'
import { isControl } from './control.ts'
import type { Run } from './run.ts'

/** A bail phase's outcome: the refusal's reason, or undefined when every handler let it pass. */
export async function bail<N extends PhaseName>(run: Run, name: N, value: PhaseValue<N>): Promise<string | undefined> {
  const handlers = run.agent.dispatch.handlers(name)
  if (!handlers.length) return undefined
  // A copy each handler cannot change: what the kernel acts on after the phase is its own value.
  const copy = sealed(value)
  for (const { callback, provider } of handlers) {
    const answer = await call(run, name, provider, () => callback(copy, info(run)))
    if (answer === undefined || answer === null) continue
    const reason = (answer as { refuse?: unknown }).refuse
    if (typeof reason !== 'string' || !reason.trim())
      throw failed(name, provider, `a ${name} handler answers undefined or { refuse: "reason" }, got ${describe(answer)}`)
    return reason
  }
  return undefined
}

/**
 * A bail phase over an action (its call: `extra` beside the id, tool, arguments and their hash), as what
 * closes it: `phase_refused` with the reason, or `phase_failed` when a handler threw or answered
 * nonsense (fail closed); undefined when it may go on (at once without a handler: bail asks no one).
 * `where` says where it was stopped ("before policy").
 */
export async function veto(
  run: Run,
  name: 'tool/before-decide' | 'tool/before-execute',
  [action, tool, args, extra]: [ActionState, string, unknown, object],
  where: string,
): Promise<{ code: 'phase_refused' | 'phase_failed'; observation: string } | undefined> {
  const call = { actionId: action.id, tool, args, argsHash: action.argsHash, ...extra } as PhaseValue<typeof name>
  try {
    const reason = await bail(run, name, call)
    return reason === undefined ? undefined : { code: 'phase_refused', observation: `Refused ${where}: ${reason}. Nothing was run.` }
  } catch (error) {
    if (!CordageError.is(error, 'phase_failed')) throw error
    return { code: 'phase_failed', observation: `Refused: ${error.message}. Nothing was run.` }
  }
}

/** Whether the run's agent has a handler for phase `name`: without one the caller skips the phase, and awaits nothing. */
export function intercepted(run: Run, name: PhaseName): boolean {
  return run.agent.dispatch.handlers(name).length > 0
}

/** A serial phase's value after every handler had its say; each replacement must pass `check` (a problem, or undefined). */
export async function serial<N extends PhaseName>(
  run: Run,
  name: N,
  value: PhaseValue<N>,
  check: (value: unknown) => string | undefined,
): Promise<PhaseValue<N>> {
  const handlers = run.agent.dispatch.handlers(name)
  if (!handlers.length) return value
  let current = value
  for (const { callback, provider } of handlers) {
    const answer = await call(run, name, provider, () => callback(sealed(current), info(run)))
    if (answer === undefined || answer === null) continue
    const problem = check(answer)
    if (problem) throw failed(name, provider, problem)
    current = answer as PhaseValue<N>
  }
  return current
}

/** A deep copy, deeply frozen: a handler that changes what it was shown changes nothing the kernel acts on. */
function sealed<T>(value: T): T {
  return deepFreeze(structuredClone(value))
}

function info(run: Run): PhaseInfo {
  const { runId, view: state, signal, agent } = run
  return { runId, agent: agent.name, state, signal, timeoutMs: agent.options.serviceTimeouts.phases }
}

async function call(run: Run, name: PhaseName, provider: string, handler: () => unknown): Promise<unknown> {
  try {
    const answer = run.ask('phases', provider, handler)
    return isThenable(answer) ? await answer : answer
  } catch (error) {
    // Overrun, cancelled, past the deadline: the run ends with that code, as for any service it asks.
    if (isControl(error) || CordageError.is(error, 'phase_failed')) throw error
    throw failed(name, provider, (error as Error)?.message ?? String(error))
  }
}

function failed(name: PhaseName, provider: string, why: string): CordageError {
  return new CordageError('phase_failed', `the ${name} handler of ${provider} failed: ${why}`)
}
