/**
 * @module drift
 * Version drift: which plugins differ (in version, or in content at the same version) from those a run
 * started with, and what is decided for each before the run goes on. `--accept-drift` accepts all;
 * otherwise each plugin's `onDrift` (default refuse); a plugin the runtime pins runs at the recorded
 * version. The decision is recorded as run/version-drift and a refusal is thrown as `version_drift`.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../contracts/state.ts'
import type { Recorder } from './recorder.ts'
import { KernelProducer } from './version.ts'
import { turn } from './command-ids.ts'

/** What a resumed run does when a plugin differs from the one it started with (preset `onDrift`). */
export type DriftPolicy = 'refuse' | 'accept' | 'pin'

/** One plugin that differs from what the run started with, and what was decided for it. */
export interface DriftChange {
  plugin: string
  from?: string
  to?: string
  fromHash?: string
  toHash?: string
  decision: 'refused' | 'accepted' | 'pinned'
  /** Why a `pin` could not be honoured. */
  note?: string
}

/** The plugins (name → version, and content hashes where known) a run is bound to, or an agent runs. */
export interface PluginSet {
  readonly plugins: Record<string, string>
  readonly hashes?: Record<string, string>
}

/** What an agent runs and how it treats drift. */
export interface DriftRules extends PluginSet {
  readonly pinned: Record<string, { version: string; hash?: string }>
  readonly driftPolicies: Record<string, DriftPolicy>
}

/** Each plugin that differs between what the run recorded and what the agent runs, with its decision. */
export function driftChanges(recorded: PluginSet, agent: DriftRules, acceptDrift: boolean): DriftChange[] {
  const names = new Set([...Object.keys(recorded.plugins), ...Object.keys(agent.plugins)])
  const changes: DriftChange[] = []
  for (const plugin of [...names].sort()) {
    const from = recorded.plugins[plugin],
      to = agent.plugins[plugin]
    const fromHash = recorded.hashes?.[plugin],
      toHash = agent.hashes?.[plugin]
    // Own keys only: a plugin named like an Object method must not find one.
    const pin = Object.hasOwn(agent.pinned, plugin) ? agent.pinned[plugin] : undefined
    if (pin) {
      changes.push({ plugin, from, to: pin.version, fromHash, toHash: pin.hash, decision: 'pinned' })
      continue
    }
    const hashDrift = from === to && fromHash !== undefined && toHash !== undefined && fromHash !== toHash
    if (from === to && !hashDrift) continue
    const policy = acceptDrift
      ? 'accept'
      : ((Object.hasOwn(agent.driftPolicies, plugin) ? agent.driftPolicies[plugin] : undefined) ?? 'refuse')
    changes.push({
      plugin,
      from,
      to,
      ...(fromHash || toHash ? { fromHash, toHash } : {}),
      decision: policy === 'accept' ? 'accepted' : 'refused',
      // The host pins when it can (host/app.ts forRun); here it could not.
      note:
        policy === 'pin'
          ? `cannot pin: ${from === undefined ? 'the run did not have this plugin' : `${plugin}@${from}${hashDrift ? ` with content ${fromHash}` : ''} is not installed here`}`
          : undefined,
    })
  }
  return changes
}

/** What recording a drift decision needs of the run's driver. */
export interface DriftPort {
  readonly rec: Recorder
  flush(): Promise<void>
}

/** The command that would continue the run: what a refusal did not carry out. `worker`: a worker taking the run over. */
export type DriftCommand = 'approve' | 'reject' | 'reconcile' | 'resume' | 'worker'

/**
 * Record the decision (nothing when nothing changed); throw `version_drift` when any change is refused.
 * The refusal is the harness's, whoever gave the command: the message says so, names the command that
 * was not carried out and who gave it, and how to go on.
 */
export async function recordDrift(
  driver: DriftPort,
  state: RunState,
  changes: DriftChange[],
  by: string,
  command: DriftCommand,
): Promise<void> {
  if (!changes.length) return
  const refused = changes.filter((c) => c.decision === 'refused')
  const decision = refused.length ? 'refused' : changes.every((c) => c.decision === 'pinned') ? 'pinned' : 'accepted'
  driver.rec.record('run/version-drift', { changes, decision, by, command }, KernelProducer, turn(state))
  if (decision !== 'refused') return
  await driver.flush()
  // Hashes are shown only when they are the difference (same version, other files).
  const show = (c: DriftChange, version?: string, hash?: string) =>
    `${version ?? '(none)'}${c.from === c.to && hash ? ` (${hash.slice(0, 19)})` : ''}`
  const list = refused
    .map((c) => `${c.plugin} ${show(c, c.from, c.fromHash)} → ${show(c, c.to, c.toHash)}${c.note ? ` [${c.note}]` : ''}`)
    .join(', ')
  const notDone =
    command === 'worker'
      ? `a worker's takeover was not carried out (the run is suspended); to continue it on the current versions, resume it with --accept-drift (acceptDrift)`
      : `the ${command} given by ${by} was not carried out (only this refusal is recorded); to continue on the current versions, give the same command again with --accept-drift (acceptDrift)`
  throw new CordageError(
    'version_drift',
    `run ${state.runId} started with other plugin versions (${list}); the harness refused to continue it under them: ${notDone}, give the plugin onDrift: accept or pin in the preset, or run it where the recorded versions are installed`,
    { data: changes },
  )
}
