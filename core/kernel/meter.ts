/**
 * @module meter
 * The kernel's side of token and cost budgets (issue 12; docs/concepts/budgets.md): it asks the agent's
 * `meter` service (core/contracts/services/meter.ts) at the boundaries and enforces what it answers. At
 * every boundary of the loop the meter may stop the run (STOPPED with its code); before a model call
 * or a wave of tool calls it reserves them all at once (`budget/reserved`) or refuses, and the run
 * suspends before any starts (`reservation_refused`); when a reserved call ended it settles it
 * (`budget/settled`). Every answer is bounded in time and checked (core/contracts/checks/meter.ts),
 * and a meter that fails refuses or ends the run: never an unmetered call. A run whose budgets need
 * a meter, in an agent that has none, does not go on (`service_missing`, naming the plugin to add).
 *
 * Reservations are state (core/kernel/state.ts reduces them), so a run rebuilt from its log after a
 * crash still holds the ones that were open, and the kernel does not ask for them twice.
 */
import { CordageError, type Code } from '../contracts/errors.ts'
import type { Reservation, Usage } from '../contracts/data.ts'
import type { RunState } from '../contracts/state.ts'
import type { ModelService } from '../contracts/services/model.ts'
import type { Tool } from '../contracts/services/tools.ts'
import { meterMissing, meteredBudgets, type MeterAnswer, type MeterCall, type MeterService } from '../contracts/services/meter.ts'
import { checkMeterAnswer, checkMeterBound, checkSettlement } from '../contracts/checks/meter.ts'
import type { Checked } from '../contracts/check.ts'
import { isThenable } from './bounded.ts'
import { isControl } from './control.ts'
import type { ServiceEntry } from './cordis.ts'
import type { Stop } from './flow.ts'
import { KernelProducer } from './version.ts'
import type { Run } from './run.ts'

/** The open reservation of an action (or of the open model call, without `actionId`). */
export function openReservation(state: RunState, kind: Reservation['kind'], actionId?: string): Reservation | undefined {
  return state.reservations?.find((r) => r.kind === kind && r.actionId === actionId)
}

/** Refuse to start or resume a run with these budgets in an agent without a meter (`service_missing`). */
export function requireMeter(agent: string, meter: ServiceEntry | undefined, budgets: Parameters<typeof meteredBudgets>[0]): void {
  const needs = meteredBudgets(budgets)
  if (needs.length && !meter?.declared) throw new CordageError('service_missing', meterMissing(agent, needs))
}

/** At a boundary, for a run with a meter (else {@link unmetered}): the meter's bound. Undefined when the run goes on. */
export async function meterBound(run: Run): Promise<Stop | undefined> {
  const bound = await answer(run, 'check the budgets', (m) => m.check({ state: run.view }), checkMeterBound, 'a bound')
  if (bound instanceof CordageError) return { end: 'FAILED', code: control(bound).code, reason: bound.message }
  return bound.kind === 'stop' ? { end: 'STOPPED', code: bound.code, reason: bound.reason } : undefined
}

/** Without a meter: the run is suspended when it has token or cost budgets, which only a meter can hold. */
export function unmetered(run: Run): Stop | undefined {
  const needs = meteredBudgets(run.state.budgets)
  return needs.length ? suspend(`${meterMissing(run.agent.name, needs)}; then resume`, 'service_missing') : undefined
}

const suspend = (reason: string, code: Code): Stop => ({ pause: 'SUSPENDED', reason, detail: { code } })

/** Before a model call: reserve it, or suspend. A model reservation still open (the process stopped during the call) is kept. */
export function reserveModelCall(run: Run, model: ModelService, contextTokens: number, step: number): Promise<Stop | undefined> {
  if (openReservation(run.state, 'model')) return Promise.resolve(undefined)
  const call: MeterCall = { kind: 'model', step, contextTokens, maxOutputTokens: model.maxOutputTokens, prices: model.prices }
  return reserve(run, [call], run.state.lastSeq)
}

/** Before a wave starts: reserve every call of it at once, or suspend before any starts. */
export function reserveWave(run: Run, jobs: readonly { action: { id: string }; tool: Tool }[]): Promise<Stop | undefined> {
  const calls: MeterCall[] = jobs
    // Kept from an earlier attempt, or from before a crash (state holds it): not reserved twice.
    .filter(({ action }) => !openReservation(run.state, 'tool', action.id))
    .map(({ action, tool }) => ({ kind: 'tool', actionId: action.id, tool: tool.name, cost: tool.cost }))
  return reserve(run, calls, undefined)
}

async function reserve(run: Run, calls: MeterCall[], causation: number | undefined): Promise<Stop | undefined> {
  if (!run.services.meter || !calls.length) return undefined
  const asked = Object.freeze(calls.map((c) => Object.freeze({ ...c })))
  const check = (a: unknown) => checkMeterAnswer(a, calls)
  const got = await answer(run, 'reserve', (m) => m.reserve({ state: run.view, calls: asked }), check, 'a reservation')
  const reason = got instanceof CordageError ? control(got).message : got.kind === 'refuse' ? got.reason : undefined
  if (reason !== undefined) return suspend(reason, 'reservation_refused')
  const { reservations, available } = got as MeterAnswer & { kind: 'reserve' }
  const one = reservations.length === 1 ? reservations[0].actionId : undefined
  if (reservations.length) run.rec.record('budget/reserved', { reservations, available }, KernelProducer, run.idsOf(one, causation))
  return undefined
}

/**
 * Settle an open reservation with what its call reported. Returns the error the run must end with
 * when the meter failed (the caller ends it where it may), undefined when settled or nothing to settle.
 */
export async function settleCall(run: Run, reservation: Reservation | undefined, usage: Usage): Promise<CordageError | undefined> {
  if (!reservation || !run.services.meter) return undefined
  const input = { state: run.view, reservation: { ...reservation }, usage: { ...usage } }
  const actual = await answer(run, 'settle', (m) => m.settle(input), checkSettlement, 'a settlement')
  if (actual instanceof CordageError) return actual
  const ids = run.idsOf(reservation.actionId, run.state.lastSeq)
  run.rec.record('budget/settled', { reservation: { ...reservation }, actual }, KernelProducer, ids)
  return undefined
}

/** A control error (a timeout, the deadline, a cancel) ends the run as such wherever the meter was asked. */
function control(error: CordageError): CordageError {
  if (isControl(error)) throw error
  return error
}

/**
 * The meter's answer, bounded like every service the loop asks (`serviceTimeouts.meter`, the deadline,
 * a cancel) and checked; what went wrong as an error (`internal_error`, `verdict_invalid`, or the control
 * error itself), never thrown: the caller decides what it means where it is.
 */
async function answer<T>(
  run: Run,
  verb: string,
  call: (meter: MeterService) => unknown,
  check: (answer: unknown) => Checked<T>,
  what: string,
): Promise<T | CordageError> {
  const { value, provider } = run.services.meter!
  try {
    const pending = run.ask('meter', provider, () => call(value))
    const checked = check(isThenable(pending) ? await pending : pending)
    if (checked.ok) return checked.value
    return new CordageError('verdict_invalid', `meter ${provider} answered something that is not ${what}: ${checked.problem}`)
  } catch (error) {
    if (isControl(error)) return error as CordageError
    return new CordageError('internal_error', `meter ${provider} failed to ${verb}: ${(error as Error)?.message ?? error}`)
  }
}
