/**
 * @module drift
 * What a run is bound to (the plugins and content hashes it recorded), what differs from it when the
 * run goes on, and the narrow hook through which the host decides it (core/kit/drift.ts). The kernel
 * records the decision (run/version-drift) and refuses when any change is refused.
 */

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

/** The command that would continue the run: what a refusal did not carry out. `worker`: a worker taking the run over. */
export type DriftCommand = 'approve' | 'reject' | 'reconcile' | 'resume' | 'worker'

/**
 * The host's drift decision for a run about to go on: each plugin that differs between what the run
 * `recorded` and what the agent runs now (`current`), with what is decided for it (`acceptDrift`: the
 * command accepts every change). Synchronous; a throw or an answer that is not a list of changes
 * refuses (core/contracts/checks/drift.ts).
 */
export type BindingCheck = (recorded: PluginSet, current: PluginSet, acceptDrift: boolean) => readonly DriftChange[]
