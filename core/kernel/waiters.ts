/**
 * @module waiters
 * Who follows a run in this process (`AgentRuntime.follow`): each waits for the run's next event or a
 * poll interval, whichever comes first (another process may be writing the log), and is woken when
 * this process dispatches an event of that run.
 */
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
