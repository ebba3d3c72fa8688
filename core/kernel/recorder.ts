/**
 * @module recorder
 * Persist before you act (invariant 3). The loop records events into a buffer, applying each to run
 * state at once, and calls {@link Recorder.flush} before any effect the events allow: the batch is
 * appended to the store with the expected seq, and only then handed to listeners. Listeners therefore
 * never see an event that is not durable. Every event is scrubbed of the run's secrets here, and an
 * event that ends a dry run is marked so here (core/kernel/dry-run-mark.ts).
 */
import { EventSchemaVersion, type RunEvent, type RunEventMap, type RunEventType } from '../contracts/events.ts'
import { apply, type RunState } from './state.ts'
import type { AppendOptions, EffectWrite, Lease, StoreService, StoreWriter } from '../contracts/services/store.ts'
import type { Dispatch } from './cordis.ts'
import { guardStore } from './store-writer.ts'
import type { Scrubber } from '../kit/secrets.ts'
import { markDryRun } from './dry-run-mark.ts'

export interface EventIds {
  turnId?: string
  stepId?: string
  actionId?: string
  /** Seq of the event that led to this one. */
  causation?: number
}

export class Recorder {
  private buffer: RunEvent[] = []
  private durable: number
  /** Sent with every append as a fencing token, once the run has an owner. */
  lease: Lease | undefined
  /** The thread turn the run's first append claims (core/kernel/run-draft.ts, from plugins/threads); cleared once written. */
  threadClaim: AppendOptions['thread']

  constructor(
    readonly state: RunState,
    private store: () => StoreService,
    private dispatch: Dispatch,
    /** Secrets to keep out of the record (core/kit/secrets.ts); applied before anything else sees an event. */
    private readonly scrubber?: Scrubber,
    writer?: StoreWriter,
  ) {
    this.durable = state.lastSeq
    this.#writerOnly = Object.freeze({ writer })
  }

  /** The options of an append that has nothing but the writer to say: one object, not one per flush. */
  readonly #writerOnly: { writer: StoreWriter | undefined }

  /** `value` with the agent's secrets scrubbed out (itself when there is nothing to scrub). */
  scrub<T>(value: T): T {
    return this.scrubber?.active ? this.scrubber.scrub(value) : value
  }

  /** Record an event: stamp the envelope, apply it to state, buffer it until the next flush. */
  record<K extends RunEventType>(type: K, data: RunEventMap[K], producer: string, ids: EventIds = {}): RunEvent<K> {
    data = markDryRun(this.state, type, data, ids.actionId)
    // Built field by field (not by spreading `ids`): this runs ten times a step.
    const event = {
      type,
      seq: this.state.lastSeq + 1,
      time: Date.now(),
      runId: this.state.runId,
      // Every event of a run that is a turn of a thread says which thread (run/start before state has it).
      threadId: this.state.thread?.id ?? (type === 'run/start' ? (data as RunEventMap['run/start']).thread?.id : undefined),
      turnId: ids.turnId,
      stepId: ids.stepId,
      actionId: ids.actionId,
      causation: ids.causation,
      schema: EventSchemaVersion,
      producer,
      data: this.scrubber?.active ? this.scrubber.scrub(data) : data,
    } as RunEvent<K>
    apply(this.state, event as RunEvent)
    this.buffer.push(event as RunEvent)
    return event
  }

  /**
   * Append buffered events as one batch, then dispatch them. Fails with `seq_conflict` if another writer
   * got there first. Returns a promise only when the store does: `await` on it either way.
   */
  flush(effects?: EffectWrite[], snapshot?: { version: number; state: unknown }): Promise<void> | undefined {
    if (this.buffer.length === 0) {
      if (effects?.length) throw new Error('ledger writes without events: a ledger write always comes with the event that records it')
      return undefined
    }
    const batch = this.buffer
    this.buffer = []
    if (effects && this.scrubber?.active) effects = effects.map((e) => this.scrubber!.scrub(e))
    const thread = this.threadClaim
    const options =
      this.lease || effects?.length || snapshot || thread
        ? { lease: this.lease, effects, snapshot, writer: this.#writerOnly.writer, ...(thread ? { thread } : {}) }
        : this.#writerOnly
    // Not written: the batch goes back to the buffer.
    const restore = (error: unknown): never => {
      this.buffer = batch
      throw error
    }
    let written
    try {
      written = guardStore(this.store()).append(this.state.runId, batch, this.durable, options)
    } catch (error) {
      restore(error)
    }
    if (written) return written.then(() => this.delivered(batch), restore)
    this.delivered(batch)
    return undefined
  }

  /** Take the last buffered event back out (it must not be written; state is rebuilt from the store after). */
  dropLast(): RunEvent | undefined {
    return this.buffer.pop()
  }

  /** Forget the buffer: state was rebuilt from the store, which is now the truth. */
  reset(): void {
    this.buffer = []
    this.durable = this.state.lastSeq
  }

  private delivered(batch: RunEvent[]): void {
    this.durable = batch[batch.length - 1].seq
    this.threadClaim = undefined
    for (const event of batch) this.dispatch(event)
  }
}

Object.freeze(Recorder.prototype)
