/**
 * @module ownership
 * One worker drives a run at a time. While a driver holds a run's lease it renews it (every third of
 * its lifetime) and, when the store is shared with other processes, watches for a cancel request made
 * elsewhere. Every append carries the lease as a fencing token, so a worker that lost its lease (it
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
   * Whether the lease is still ours by this process's clock. False once it may have expired: after the
   * process was frozen (SIGSTOP, a long GC pause, a suspended VM) past its expiry, another worker may
   * own the run, even though no renewal has failed yet.
   */
  held(now = Date.now()): boolean {
    return !this.released && now < this.heldUntil
  }

  /**
   * Make sure the lease is still ours before something that must not be done twice: by this process's
   * clock when it can tell, else by renewing it at the store now. A process that was only slow (its
   * renewals late, nobody took the run over) keeps its lease; one whose run another worker took over
   * learns it here. Rejects with `lease_lost`.
   */
  async ensure(): Promise<void> {
    if (this.held()) return
    if (!this.released) {
      const sent = Date.now()
      const renewed = await Promise.resolve(guardStore(this.store()).renew(this.lease, this.options.ttlMs, this.writer!)).catch(() => false)
      if (renewed) {
        this.heldUntil = Math.max(this.heldUntil, sent + this.options.ttlMs)
        return
      }
    }
    const error = new CordageError(
      'lease_lost',
      `run ${this.lease.runId}: worker ${this.lease.worker} no longer holds its lease (token ${this.lease.token}): another worker owns the run, so nothing more is done here`,
    )
    this.options.onLost(error)
    throw error
  }

  /** Start renewing, and watching for cancel requests when other processes share the store. */
  start(): void {
    const { ttlMs, watchMs } = this.options
    const renew = setInterval(
      () => {
        const sent = Date.now()
        Promise.resolve()
          .then(() => guardStore(this.store()).renew(this.lease, ttlMs, this.writer!))
          .then(
            (held) => {
              if (held) this.heldUntil = Math.max(this.heldUntil, sent + ttlMs)
              if (!held && !this.released)
                this.options.onLost(
                  new CordageError(
                    'lease_lost',
                    `run ${this.lease.runId}: worker ${this.lease.worker} lost its lease (${this.lease.token}); another worker owns the run`,
                  ),
                )
            },
            () => {
              /* a failed renewal is retried at the next tick; the fencing token protects the log meanwhile */
            },
          )
      },
      Math.max(10, Math.floor(ttlMs / 3)),
    )
    this.timers.push(renew)
    if (this.store().shared) {
      const watch = setInterval(() => {
        Promise.resolve(this.store().cancelRequest(this.lease.runId)).then(
          (request) => {
            if (request) this.options.onCancel(request)
          },
          () => {},
        )
      }, watchMs)
      this.timers.push(watch)
    }
    // A lease must never keep the process alive on its own.
    for (const timer of this.timers) timer.unref?.()
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
