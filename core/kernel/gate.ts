/**
 * @module gate
 * Step boundaries. A plugin swap must not land in the middle of a step: the step in flight finishes
 * on the old version and the next step uses the new one. Runs hold the gate while a step is in flight;
 * {@link StepGate.exclusive} waits until no step is in flight, holds new steps back, runs the swap,
 * and lets them go. With no swap pending, entering and leaving is a counter and nothing more.
 */
export class StepGate {
  private inFlight = 0
  private pending: Promise<void> | undefined
  private drained: (() => void) | undefined

  /** Called before a step starts. Returns nothing (no await needed) unless a swap is waiting or running. */
  enter(): Promise<void> | undefined {
    if (this.pending) return this.waitThenEnter()
    this.inFlight++
    return undefined
  }

  private async waitThenEnter(): Promise<void> {
    while (this.pending) await this.pending
    this.inFlight++
  }

  /** A swap waits for runs to reach a step boundary. */
  get swapWaiting(): boolean {
    return this.pending !== undefined
  }

  /** Called when a step ends (or the run pauses or ends mid-step). */
  leave(): void {
    this.inFlight--
    if (this.inFlight === 0) this.drained?.()
  }

  /** Run `task` at a step boundary of every run of the agent. */
  async exclusive<T>(task: () => Promise<T> | T): Promise<T> {
    while (this.pending) await this.pending
    let release!: () => void
    this.pending = new Promise<void>((resolve) => (release = resolve))
    try {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve))
      this.drained = undefined
      return await task()
    } finally {
      this.pending = undefined
      release()
    }
  }
}

Object.freeze(StepGate.prototype)
