/**
 * @module kit/drift
 * Version drift, as the host decides it (and the kernel, by the same rules, when the host gave no check): which plugins differ (in version, or in content at the same
 * version) from those a run started with, and what is decided for each before the run goes on.
 * `--accept-drift` accepts all; otherwise each plugin's `onDrift` (default refuse); a plugin the
 * runtime pins runs at the recorded version. The runtime records the decision as run/version-drift
 * and refuses as `version_drift` when any change is refused (core/kernel/drift.ts). Without the host's
 * rules (no pins, no `onDrift`), every plugin that differs is refused unless accepted: the kernel's default.
 */
import type { BindingCheck, DriftChange, DriftCommand, DriftPolicy, PluginSet } from '../contracts/drift.ts'

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
    // Own keys only: a plugin named like an Object method must not find one, on either side.
    const from = own(recorded.plugins, plugin),
      to = own(agent.plugins, plugin)
    const fromHash = own(recorded.hashes, plugin),
      toHash = own(agent.hashes, plugin)
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

/**
 * The binding check the host hands a runtime it builds: the agent's `onDrift` policies and the plugins
 * it pins for one run, applied to what the runtime runs when the run goes on.
 */
export function driftBinding(
  driftPolicies: Record<string, DriftPolicy>,
  pinned: Record<string, { version: string; hash?: string }> = {},
): BindingCheck {
  return (recorded, current, acceptDrift) => driftChanges(recorded, { ...current, pinned, driftPolicies }, acceptDrift)
}

function own(record: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return record && Object.hasOwn(record, key) ? record[key] : undefined
}

/**
 * Why a run was not continued on other plugin versions: the harness's refusal, whoever gave the
 * command. It names the command that was not carried out and who gave it, and how to go on. Hashes are
 * shown only when they are the difference (same version, other files).
 */
export function driftRefusal(runId: string, refused: DriftChange[], by: string, command: DriftCommand): string {
  const show = (c: DriftChange, version?: string, hash?: string) =>
    `${version ?? '(none)'}${c.from === c.to && hash ? ` (${hash.slice(0, 19)})` : ''}`
  const list = refused
    .map((c) => `${c.plugin} ${show(c, c.from, c.fromHash)} → ${show(c, c.to, c.toHash)}${c.note ? ` [${c.note}]` : ''}`)
    .join(', ')
  const notDone =
    command === 'worker'
      ? `a worker's takeover was not carried out (the run is suspended); to continue it on the current versions, resume it with --accept-drift (acceptDrift)`
      : `the ${command} given by ${by} was not carried out (only this refusal is recorded); to continue on the current versions, give the same command again with --accept-drift (acceptDrift)`
  return `run ${runId} started with other plugin versions (${list}); the harness refused to continue it under them: ${notDone}, give the plugin onDrift: accept or pin in the preset, or run it where the recorded versions are installed`
}
