/**
 * @module ticket
 * Authorization tickets (invariant 1). The loop issues a ticket for one recorded policy decision (or
 * approval) right before it runs the tool; the tool's guard redeems it. A ticket is bound to run,
 * action, tool, arguments hash, policy version and expiry, and can be used once.
 *
 * Issuing is a capability, not an export. The kernel's book of tickets lives in this module; the
 * right to issue into it is handed out once ({@link claimTicketIssuer}), and the kernel's effect
 * runner takes it when it loads, before any plugin can. Nothing that `cordage`, `cordage/host`, the
 * agents service or a plugin context exposes can issue, forge or replay a ticket.
 *
 * Tickets never leave the process that issued them: a resumed run gets a fresh ticket from its durable
 * decision. That lets the book check identity instead of a signature: only the exact object it issued
 * is accepted, so a ticket cannot be forged from the id recorded in `tool/start`, copied, or replayed.
 * No crypto on the hot path.
 */
import { CordageError } from '../contracts/errors.ts'
import { digestArgs } from '../kit/hash.ts'
import { isDeepFrozen } from '../kit/freeze.ts'
import type { Ticket, Grant, CallBinding } from '../contracts/data.ts'
export type { Ticket, Grant, CallBinding } from '../contracts/data.ts'

/** Issued tickets not yet redeemed are kept to this many; beyond it, expired ones are dropped first. */
const PruneAbove = 1024
/** Redeemed tickets remembered for a clearer refusal of a replay: at least the last 4,096 (at most 8,191). */
const SpentGeneration = 4096

/**
 * A book of tickets: what was issued and not yet used, and what was used. The kernel keeps one; a book
 * anyone else makes is worthless, since tools redeem against the kernel's.
 */
export class TicketBook {
  /** Issued and not yet redeemed, with the arguments object each was issued for (when the issuer gave it). */
  readonly #issued = new Map<string, { ticket: Ticket; args: unknown }>()
  /**
   * The last tickets redeemed, by id, so a replay of one says `ticket_reused` rather than
   * `ticket_invalid` (only the very object counts): this generation and the one before, each up to
   * SpentGeneration. A replay of an older one is refused as `ticket_invalid`. Maps of ids, not a
   * WeakSet of tickets: a weak entry per call is paid for again at every collection. Two generations,
   * dropped whole, and not one Map that forgets its oldest entry per redeem: deleting from a Map of
   * thousands of entries costs a cache miss or two each time (measured: 1.2 µs a redeem against 0.1).
   */
  #spent = new Map<string, Ticket>()
  #spentBefore = new Map<string, Ticket>()
  readonly #prefix = Math.random().toString(36).slice(2, 8)
  #counter = 0

  /** A ticket for one call. `args`, when given, is the deeply frozen object `grant.argsHash` is the hash of. */
  issue(grant: Grant, now = Date.now(), args?: unknown): Ticket {
    if (this.#issued.size > PruneAbove) this.prune(now)
    const ticket: Ticket = Object.freeze({
      id: `tk_${this.#prefix}_${++this.#counter}`,
      runId: grant.runId,
      actionId: grant.actionId,
      tool: grant.tool,
      argsHash: grant.argsHash,
      policyVersion: grant.policyVersion,
      expiresAt: now + (grant.ttlMs ?? 60_000),
      target: grant.target,
    })
    this.#issued.set(ticket.id, { ticket, args })
    return ticket
  }

  /**
   * Consume a ticket for a call, or throw.
   * Contract: throws CordageError `ticket_missing`, `ticket_invalid` (not an object this book issued),
   * `ticket_reused`, `ticket_expired` or `ticket_mismatch`. A ticket this book issued is spent by any
   * attempt to use it, even one that fails: it cannot be tried again with other arguments.
   */
  redeem(ticket: Ticket | undefined, call: CallBinding, now = Date.now()): void {
    if (!ticket)
      throw new CordageError(
        'ticket_missing',
        `tool "${call.tool}" was invoked without a ticket (run ${call.runId}, action ${call.actionId})`,
      )
    const known = typeof ticket === 'object' ? this.#issued.get(ticket.id) : undefined
    if (known === undefined) {
      if (typeof ticket === 'object' && (this.#spent.get(ticket.id) ?? this.#spentBefore.get(ticket.id)) === ticket)
        throw new CordageError('ticket_reused', `ticket ${ticket.id} for tool "${call.tool}" was already used`)
      throw new CordageError('ticket_invalid', `ticket ${String(ticket.id)} for tool "${call.tool}" was not issued by this process`)
    }
    if (known.ticket !== ticket) throw new CordageError('ticket_invalid', `ticket ${ticket.id} is a copy, not the ticket that was issued`)
    this.#issued.delete(ticket.id)
    // A full generation becomes the one before, and the one before it is dropped whole.
    if (this.#spent.set(ticket.id, ticket).size >= SpentGeneration) [this.#spentBefore, this.#spent] = [this.#spent, new Map()]
    if (now > ticket.expiresAt) throw new CordageError('ticket_expired', `ticket ${ticket.id} expired ${now - ticket.expiresAt} ms ago`)
    // The very object the ticket was issued for, deeply frozen, still has the hash it had then.
    const same =
      known.args !== undefined && call.args === known.args && typeof call.args === 'object' && call.args !== null && isDeepFrozen(call.args)
    const argsHash = same ? ticket.argsHash : digestArgs(call.args)
    if (ticket.runId !== call.runId) throw mismatch(ticket, `run ${ticket.runId}, not ${call.runId}`)
    if (ticket.actionId !== call.actionId) throw mismatch(ticket, `action ${ticket.actionId}, not ${call.actionId}`)
    if (ticket.tool !== call.tool) throw mismatch(ticket, `tool "${ticket.tool}", not "${call.tool}"`)
    if (ticket.target !== call.target) throw mismatch(ticket, `the tool "${ticket.tool}" the loop judged, not another object that calls it`)
    if (ticket.argsHash !== argsHash) throw mismatch(ticket, `arguments ${ticket.argsHash}, not ${argsHash}`)
  }

  /** Tickets issued and not yet redeemed (expired ones included until they are pruned). */
  get outstanding(): number {
    return this.#issued.size
  }

  /** Drop issued tickets whose expiry has passed. */
  prune(now = Date.now()): void {
    for (const [id, { ticket }] of this.#issued) if (ticket.expiresAt < now) this.#issued.delete(id)
  }
}
Object.freeze(TicketBook.prototype)

const mismatch = (ticket: Ticket, what: string) => new CordageError('ticket_mismatch', `ticket ${ticket.id} is for ${what}`)

const kernelBook = new TicketBook()
let claimed = false

/**
 * Consume a ticket of the kernel's book for a call, or throw: what every tool built with defineTool
 * does before its body runs. See {@link TicketBook.redeem}.
 */
export function redeemTicket(ticket: Ticket | undefined, call: CallBinding, now = Date.now()): void {
  kernelBook.redeem(ticket, call, now)
}

/**
 * The right to issue tickets into the kernel's book, handed out exactly once. core/kernel/effects.ts claims it
 * as it loads; every later call throws.
 */
export function claimTicketIssuer(): (grant: Grant, now?: number, args?: unknown) => Ticket {
  if (claimed)
    throw new CordageError(
      'ticket_invalid',
      'tickets are issued by the kernel alone, after a recorded policy decision; no plugin or application can issue one',
    )
  claimed = true
  return (grant, now, args) => kernelBook.issue(grant, now, args)
}
