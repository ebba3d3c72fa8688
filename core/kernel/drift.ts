/**
 * @module drift
 * What the kernel enforces of version drift: the host decides what differs from the plugins a run is
 * bound to and what to do about each (its rules in core/kit/drift.ts, handed in as a {@link BindingCheck}); the
 * kernel checks that answer (a throw or garbage refuses), records it as run/version-drift and refuses
 * as `version_drift` when any change is refused. A runtime the host gave no check refuses every change
 * the command does not accept.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../contracts/state.ts'
import type { BindingCheck, DriftChange, DriftCommand, PluginSet } from '../contracts/drift.ts'
import { checkDriftChanges } from '../contracts/checks/drift.ts'
import { driftBinding, driftRefusal } from '../kit/drift.ts'
import { KernelProducer } from './version.ts'
import { turn } from './command-ids.ts'
import type { Run } from './run.ts'

/** The changes `check` decides for a run about to go on, checked: a throw or an answer that is not a list of changes refuses. */
export function bindingChanges(check: BindingCheck | undefined, runId: string, recorded: PluginSet, current: PluginSet, accept: boolean) {
  let checked
  try {
    checked = checkDriftChanges((check ?? strictBinding)(recorded, current, accept))
  } catch (error) {
    checked = { ok: false as const, problem: `it failed: ${(error as Error)?.message ?? String(error)}` }
  }
  if (checked.ok) return checked.value
  throw new CordageError(
    'version_drift',
    `run ${runId} was not continued: the host's check of the plugins it is bound to did not answer (${checked.problem})`,
  )
}

/** Without the host's check, its rules without pins or `onDrift`: each plugin that differs is refused unless accepted. */
const strictBinding: BindingCheck = driftBinding({})

/**
 * Record the decision (nothing when nothing changed); throw `version_drift` when any change is refused,
 * with the message of core/kit/drift.ts `driftRefusal` (the command not carried out, and how to go on).
 */
export async function recordDrift(driver: Run, state: RunState, changes: DriftChange[], by: string, command: DriftCommand): Promise<void> {
  if (!changes.length) return
  const refused = changes.filter((c) => c.decision === 'refused')
  const decision = refused.length ? 'refused' : changes.every((c) => c.decision === 'pinned') ? 'pinned' : 'accepted'
  driver.rec.record('run/version-drift', { changes, decision, by, command }, KernelProducer, turn(state))
  if (decision !== 'refused') return
  await driver.flush()
  throw new CordageError('version_drift', driftRefusal(state.runId, refused, by, command), { data: changes })
}
