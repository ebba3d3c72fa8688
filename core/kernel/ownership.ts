/**
 * @module ownership
 * One worker drives a run at a time. While a driver holds a run's lease it renews it (every third of
 * its lifetime) and, when the store is shared with other processes, looks for a cancel request made
 * elsewhere (every `watchMs`, and whenever the driver asks, at a boundary). Every append carries the lease as a fencing token, so a worker that lost its lease (it
 * stalled past the expiry and another took over) cannot write another event.
 */
import { CordageError } from '../contracts/errors.ts'
import type { CancelRequest, Lease, StoreService, StoreWriter } from '../contracts/services/store.ts'
import { guardStore } from './store-writer.ts'

export interface OwnershipOptions {
  ttlMs: number
  /** How often to look for a cancel request from another process (shared stores only). */
  watchMs: number
  onLost(error: CordageError): void
  onCancel(request: CancelRequest): void
  /** Where the log stands as a look is sent: a look that finds no request is reported with it (`onClear`). */
  mark(): number
  onClear(mark: number): void
}

export class Ownership {
  private timers: ReturnType<typeof setInterval>[] = []
  private released = false
  /** Until when, by this process's clock, the lease is surely ours: its expiry, moved on by each renewal. */
  private heldUntil: number

  constructor(
    readonly lease: Lease,
    private store: () => StoreService,
    private readonly writer: StoreWriter | undefined,
    private options: OwnershipOptions,
  ) {
    // The store may have stamped the expiry with another clock: trust whichever ends first.
    this.heldUntil = Math.min(lease.expiresAt, Date.now() + options.ttlMs)
  }

  /**
   * Make sure the lease is still ours before something that must not be done twice: by this process's
   * clock when it can tell, else by renewing it at the store now. A process that was only slow (its
   * renewals late, nobody took the run over) keeps its lease; one whose run another worker took over
   * learns it here. Rejects with `lease_lost`.
   */
  async ensure(): Promise<void> {
    // Held until the expiry by this clock: after the process was frozen (SIGSTOP, a long GC pause, a suspended VM)
    // past it, another worker may own the run, even though no renewal has failed yet.
    if (!this.released && (Date.now() < this.heldUntil || (await this.renew().catch(() => false)))) return
    const error = new CordageError(
      'lease_lost',
      `run ${this.lease.runId}: worker ${this.lease.worker} no longer holds its lease (token ${this.lease.token}): another worker owns the run, so nothing more is done here`,
    )
    this.options.onLost(error)
    throw error
  }

  /** Renew the lease at the store now; when it is still ours, it is held a lifetime from when the renewal was sent. A store that throws synchronously throws here. */
  private renew(): Promise<boolean> {
    const sent = Date.now()
    return Promise.resolve(guardStore(this.store()).renew(this.lease, this.options.ttlMs, this.writer!)).then((held) => {
      if (held) this.heldUntil = Math.max(this.heldUntil, sent + this.options.ttlMs)
      return held
    })
  }

  /** Start renewing, and watching for cancel requests when other processes share the store. */
  start(): void {
    const { ttlMs, watchMs } = this.options
    const every = Math.max(10, Math.floor(ttlMs / 3))
    const renew = setInterval(async () => {
      // A failed renewal is retried at the next tick; the fencing token protects the log meanwhile.
      const held = await Promise.resolve()
        .then(() => this.renew())
        .catch(() => true)
      if (held || this.released) return
      const { runId, worker, token } = this.lease
      this.options.onLost(
        new CordageError('lease_lost', `run ${runId}: worker ${worker} lost its lease (${token}); another worker owns the run`),
      )
    }, every)
    this.timers.push(renew)
    if (this.watching) this.timers.push(setInterval(() => void this.look(), watchMs))
    // A lease must never keep the process alive on its own.
    for (const timer of this.timers) timer.unref?.()
  }

  /** Other processes share the store, so a cancel may be asked there: it is looked for. */
  get watching(): boolean {
    if (this.released) return false
    try {
      return this.store().shared === true
    } catch {
      // The agent's store is gone (its runtime was stopped): nothing to look at.
      return false
    }
  }

  /**
   * Look for a cancel asked in another process, now: on the timer, and at each boundary of the run, so a
   * cancel stored while the process could not look (a call blocked it) is acted on before the run goes
   * on or ends. A store that does not answer is asked again at the next look.
   */
  async look(): Promise<void> {
    if (!this.watching) return
    const mark = this.options.mark()
    let request: CancelRequest | undefined
    try {
      request = await this.store().cancelRequest(this.lease.runId)
    } catch {
      return
    }
    if (request) this.options.onCancel(request)
    else this.options.onClear(mark)
  }

  /** Stop renewing and give the lease up. */
  async release(): Promise<void> {
    if (this.released) return
    this.released = true
    for (const timer of this.timers) clearInterval(timer)
    this.timers = []
    await guardStore(this.store()).release(this.lease, this.writer!)
  }
}

Object.freeze(Ownership.prototype)
