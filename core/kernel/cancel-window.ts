/**
 * @module cancel-window
 * Which side effects a cancel asked in another process came too late to stop. A driver learns of such
 * a cancel only when it looks at the store (on a timer, and at every boundary), and a call that blocks
 * its process keeps it from looking at all. So the effects that committed since the last look that
 * found no request may have committed after the cancel was asked for: a CANCELLED run's `run/end`
 * names them. Clock-free: positions in the log are compared, never two processes' clocks; the price is
 * that an effect that committed just before the request may be named too.
 */

/** A side effect that committed, as `run/end.effects.committed` names it. */
export interface CommittedEffect {
  actionId: string
  tool: string
  receipt?: unknown
}

export class CancelWindow {
  /** A look sent when the log stood at this seq found no request. */
  #clearThrough = 0
  /** Effects committed after {@link #clearThrough}, with the seq of their outcome. */
  #recent: (CommittedEffect & { seq: number })[] = []

  /** An effect committed (its `tool/end` is at `seq`) while no cancel was known. */
  committed(seq: number, effect: CommittedEffect): void {
    this.#recent.push({ ...effect, seq })
  }

  /** A look sent when the log stood at `seq` found no request: effects before it came before any cancel. */
  clear(seq: number): void {
    if (seq <= this.#clearThrough) return
    this.#clearThrough = seq
    this.#recent = this.#recent.filter((e) => e.seq > seq)
  }

  /** A cancel was found in the store: the effects that may have committed after it was asked for. */
  found(): CommittedEffect[] {
    return this.#recent.filter((e) => e.seq > this.#clearThrough).map(({ seq: _, ...effect }) => effect)
  }
}

Object.freeze(CancelWindow.prototype)
