/**
 * @module run
 * A run in flight, as every stage of the loop sees it: its state, its recorder, the step's services and
 * tools, and the few things only the driver that holds its lease can do (flush under the lease, bound a
 * service call in time, reach the calls in flight, keep the effects a cancel came too late for). The
 * driver (core/kernel/loop.ts) is the one implementation. The stages are free functions over it that
 * call one another directly (pause and end are core/kernel/ending.ts, closing an action unrun is
 * core/kernel/reject.ts): nothing here calls back into a stage.
 */
import type { CordageError } from '../contracts/errors.ts'
import type { CheckedMessages } from '../contracts/checks/context.ts'
import type { ArtifactRef } from '../contracts/data.ts'
import type { CancelRequest, EffectWrite, StoreService } from '../contracts/services/store.ts'
import type { RunState } from '../contracts/state.ts'
import type { LoopHost, TimedService } from './loop-host.ts'
import type { EventIds, Recorder } from './recorder.ts'
import type { StepServices } from './step-services.ts'
import type { ToolCall } from './tool-call.ts'
import type { VisibleTools } from './visible-tools.ts'

/** An effect the run keeps to name at its end: one that committed after a cancel, or one left unknown. */
export interface NotedEffect {
  actionId: string
  tool: string
  receipt?: unknown
  key?: string
  seq?: number
}

export interface Run {
  readonly runId: string
  readonly agent: LoopHost
  /** The run's state, which only the recorder's reducer changes. */
  readonly state: RunState
  /** What services and handlers see of {@link state}: a read-only view (core/kernel/readonly.ts). */
  readonly view: Readonly<RunState>
  readonly rec: Recorder
  /** Aborted when the run is cancelled or its lease is lost. */
  readonly signal: AbortSignal
  /** The step's services, read when they changed (core/kernel/step-services.ts). */
  readonly services: StepServices
  /** The step's visible tools, and what the model is shown of them. */
  readonly visible: VisibleTools
  /** Turn and step ids of where the run is now. */
  readonly ids: EventIds
  readonly cancelRequest: CancelRequest | undefined
  readonly suspendRequest: { by: string; reason: string } | undefined
  /** Set when another worker took the run over: nothing more may be written. */
  readonly lost: CordageError | undefined
  /** A control error met where the run could not stop (an outcome still to record): the run ends at the next boundary. */
  readonly deferred: unknown
  /** Side effects that committed after cancellation was requested, and those left unknown. */
  readonly noted: { committed: NotedEffect[]; unknown: (NotedEffect & { key: string })[] }
  /** Inside a step: past the swap gate, with the step's services read. */
  readonly inStep: boolean
  /** State was rebuilt from the store (a lost key race): what a batch decided before is stale. */
  reloaded: boolean
  /** The messages of the last projection that passed its check: the next check reads only what is new. */
  checkedMessages: CheckedMessages | undefined
  /** The last compaction recorded and used: the seq of its compaction/end and every seq it summarised. */
  lastCompaction: { seq: number; summarised: readonly number[] } | undefined
  /** The current ids plus an action and a cause. */
  idsOf(actionId: string | undefined, causation?: number): EventIds
  store(): StoreService
  /** A service's answer, bounded in time (`serviceTimeouts`), by the deadline and by cancellation. */
  ask<T>(service: TimedService, provider: string, call: () => T | Promise<T>): T | Promise<T>
  /** Flush buffered events (with these ledger writes) under the run's lease. */
  flush(effects?: EffectWrite[]): Promise<void> | undefined
  /** Reject with `lease_lost` unless the lease is still this worker's: checked right before a side effect starts. */
  checkLease(): Promise<void>
  /** Look for a cancel asked in another process (a shared store). */
  lookForCancel(): Promise<void> | undefined
  /** Calls in flight (`on` while running), so cancellation can reach them. */
  track(call: ToolCall, on: boolean): void
  /** A side effect committed (`seq`: its tool/end) or was left unknown. */
  noteEffect(kind: 'committed' | 'unknown', effect: NotedEffect): void
  /** A control error met where the run cannot stop yet: it ends at the next boundary. */
  defer(error: unknown): void
  /** Store a blob for this run and action with the kernel's writer. */
  putArtifact(artifact: { actionId: string; bytes: Uint8Array; mediaType: string; visibility: 'ui' | 'audit' }): Promise<ArtifactRef>
  /** Past the swap gate: in the step, its services read when they changed. Returns why the run cannot go on, or undefined. */
  enterStep(): string | undefined
  leaveStep(): void
}
