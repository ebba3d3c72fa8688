/**
 * @module recorder
 * Persist before you act (invariant 3). The loop records events into a buffer, applying each to run
 * state at once, and calls {@link Recorder.flush} before any effect the events allow: the batch is
 * appended to the store with the expected seq, and only then handed to listeners. Listeners therefore
 * never see an event that is not durable.
 */
import { EventSchemaVersion, type RunEvent, type RunEventMap, type RunEventType } from './events.ts'
import { apply, type RunState } from './state.ts'
import type { StoreService } from './services/store.ts'
import type { Dispatch } from './cordis.ts'

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

  constructor(
    readonly state: RunState,
    private store: () => StoreService,
    private dispatch: Dispatch,
  ) {
    this.durable = state.lastSeq
  }

  /** Record an event: stamp the envelope, apply it to state, buffer it until the next flush. */
  record<K extends RunEventType>(type: K, data: RunEventMap[K], producer: string, ids: EventIds = {}): RunEvent<K> {
    const event = {
      type, seq: this.state.lastSeq + 1, time: Date.now(), runId: this.state.runId,
      ...ids, schema: EventSchemaVersion, producer, data,
    } as RunEvent<K>
    apply(this.state, event as RunEvent)
    this.buffer.push(event as RunEvent)
    return event
  }

  /** Append buffered events as one batch, then dispatch them. Rejects with `seq_conflict` if another writer got there first. */
  async flush(): Promise<void> {
    if (this.buffer.length === 0) return
    const batch = this.buffer
    this.buffer = []
    await this.store().append(this.state.runId, batch, this.durable)
    this.durable = batch[batch.length - 1].seq
    for (const event of batch) this.dispatch(event)
  }

  /** Seq of the last event known to be in the store. */
  get durableSeq(): number {
    return this.durable
  }
}
