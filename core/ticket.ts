/**
 * @module ticket
 * Authorization tickets (invariant 1). The loop issues a ticket for one recorded policy decision (or
 * approval) right before it runs the tool; the tool's guard redeems it. A ticket is bound to run,
 * action, tool, arguments hash, policy version and expiry, and can be used once.
 *
 * Tickets never leave the process that issued them: a resumed run gets a fresh ticket from its durable
 * decision. That lets the authority check identity instead of a signature: only the exact object it
 * issued is accepted, so a ticket cannot be forged from the id recorded in `tool/start`, copied, or
 * replayed. No crypto on the hot path.
 */
import { CordageError } from './errors.ts'
import { hashArgs } from './hash.ts'

export interface Ticket {
  readonly id: string
  readonly runId: string
  readonly actionId: string
  readonly tool: string
  readonly argsHash: string
  readonly policyVersion: string
  /** Epoch milliseconds after which the ticket is refused. */
  readonly expiresAt: number
}

export interface Grant {
  runId: string
  actionId: string
  tool: string
  argsHash: string
  policyVersion: string
  /** Lifetime in milliseconds; default 60 s, long enough for retries of one attempt, short enough to be useless later. */
  ttlMs?: number
}

export interface CallBinding {
  runId: string
  actionId: string
  tool: string
  args: unknown
}

const issued = new Map<string, Ticket>()
/** Redeemed tickets, so a replay of one says `ticket_reused` rather than `ticket_invalid`. */
const spent = new WeakSet<Ticket>()
let counter = 0
const prefix = Math.random().toString(36).slice(2, 8)

export function issueTicket(grant: Grant, now = Date.now()): Ticket {
  if (issued.size > 1024) prune(now)
  const ticket: Ticket = Object.freeze({
    id: `tk_${prefix}_${++counter}`,
    runId: grant.runId,
    actionId: grant.actionId,
    tool: grant.tool,
    argsHash: grant.argsHash,
    policyVersion: grant.policyVersion,
    expiresAt: now + (grant.ttlMs ?? 60_000),
  })
  issued.set(ticket.id, ticket)
  return ticket
}

/**
 * Consume a ticket for a call, or throw.
 * Contract: throws CordageError `ticket_missing`, `ticket_invalid` (not an object this process issued),
 * `ticket_reused`, `ticket_expired` or `ticket_mismatch`. On success the ticket is spent.
 */
export function redeemTicket(ticket: Ticket | undefined, call: CallBinding, now = Date.now()): void {
  if (!ticket) throw new CordageError('ticket_missing', `tool "${call.tool}" was invoked without a ticket (run ${call.runId}, action ${call.actionId})`)
  const known = issued.get(ticket.id)
  if (known === undefined) {
    if (spent.has(ticket)) throw new CordageError('ticket_reused', `ticket ${ticket.id} for tool "${call.tool}" was already used`)
    throw new CordageError('ticket_invalid', `ticket ${String(ticket.id)} for tool "${call.tool}" was not issued by this process`)
  }
  if (known !== ticket) throw new CordageError('ticket_invalid', `ticket ${ticket.id} is a copy, not the ticket that was issued`)
  issued.delete(ticket.id)
  spent.add(ticket)
  if (now > ticket.expiresAt) throw new CordageError('ticket_expired', `ticket ${ticket.id} expired ${now - ticket.expiresAt} ms ago`)
  const argsHash = hashArgs(call.args)
  const mismatch =
    ticket.runId !== call.runId ? `run ${ticket.runId}, not ${call.runId}`
    : ticket.actionId !== call.actionId ? `action ${ticket.actionId}, not ${call.actionId}`
    : ticket.tool !== call.tool ? `tool "${ticket.tool}", not "${call.tool}"`
    : ticket.argsHash !== argsHash ? `arguments ${ticket.argsHash}, not ${argsHash}`
    : undefined
  if (mismatch) throw new CordageError('ticket_mismatch', `ticket ${ticket.id} is for ${mismatch}`)
}

function prune(now: number) {
  for (const [id, ticket] of issued) if (ticket.expiresAt < now) issued.delete(id)
}
