/**
 * @module kit/follow
 * Following a run's log by cursor (`AgentRuntime.follow`, which the CLI's `events --follow` and the
 * playground's event stream read): each follower waits for the run's next event or a poll interval,
 * whichever comes first (another process may be writing the log), and is woken when this process
 * dispatches an event of that run. Not part of `cordage/kit`: the runtime wires it to its store and
 * its dispatch (core/kernel/waiters.ts).
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'

export class RunWaiters {
  readonly #byRun = new Map<string, Set<() => void>>()

  /** How many runs someone waits on: dispatch asks this before it does anything for waiters. */
  get size(): number {
    return this.#byRun.size
  }

  /** Resolves at the run's next event here, after `pollMs`, or when `signal` aborts. */
  next(runId: string, pollMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.#byRun.get(runId)
      if (!set) this.#byRun.set(runId, (set = new Set()))
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        set!.delete(done)
        if (!set!.size) this.#byRun.delete(runId)
        resolve()
      }
      const timer = setTimeout(done, pollMs)
      signal?.addEventListener('abort', done, { once: true })
      set.add(done)
    })
  }

  /** Wake everyone waiting on the run. */
  wake(runId: string): void {
    const set = this.#byRun.get(runId)
    if (set) for (const done of [...set]) done()
  }
}

Object.freeze(RunWaiters.prototype)

export interface FollowOptions {
  /** Start after this seq (the last one the follower saw). */
  after?: number
  signal?: AbortSignal
  /** How often to look at the store when no event of the run is dispatched here (default 200 ms). */
  pollMs?: number
}

/** One run's log as a follower reads it. */
export interface FollowedRun {
  /** Its events after `after`, from the store. */
  read(after: number): Promise<RunEvent[]>
  /** This process drives it (it may not be in the store yet). */
  drivenHere(): boolean
  /** It has ended. */
  over(): Promise<boolean>
  /** Resolves at its next event here, after `pollMs`, or when `signal` aborts. */
  next(pollMs: number, signal?: AbortSignal): Promise<void>
}

/**
 * The events of a run after `after`, then each new one as it becomes durable, until the run ends (or
 * `signal` aborts). A client that reconnects with the last seq it saw misses nothing and sees nothing twice.
 */
export async function* followRun(run: FollowedRun, options: FollowOptions): AsyncGenerator<RunEvent> {
  let cursor = options.after ?? 0
  for (;;) {
    if (options.signal?.aborted) return
    let events: RunEvent[]
    try {
      events = await run.read(cursor)
    } catch (error) {
      // Started here a moment ago: its first events are about to be written.
      if (!CordageError.is(error, 'run_not_found') || !run.drivenHere()) throw error
      events = []
    }
    for (const event of events) {
      yield event
      cursor = event.seq
      if (event.type === 'run/end') return
    }
    if (!events.length && !run.drivenHere() && (await run.over())) return
    await run.next(options.pollMs ?? 200, options.signal)
  }
}
