/**
 * core/kernel/ticket.ts: a ticket is bound to run, action, tool and arguments, used once, refused after its
 * expiry, and only the exact object a book issued is accepted. This file imports the ticket module
 * without the kernel's effect runner, so it may claim the kernel's issuer itself (the kernel does so
 * when core/kernel/effects.ts loads; here nothing else has).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { hashArgs } from '../../core/kit/hash.ts'
import { claimTicketIssuer, redeemTicket, TicketBook, type Grant, type Ticket } from '../../core/kernel/ticket.ts'
import * as toolModule from '../../core/kernel/tool.ts'
import { defineTool } from '../../core/kernel/tool.ts'
import type { Tool } from '../../core/contracts/services/tools.ts'

const args = { ticketId: 'T-1', note: 'call back' }
const grant = (over: Partial<Grant> = {}): Grant => ({
  runId: 'run_a',
  actionId: 's1.a1',
  tool: 'record_followup',
  argsHash: hashArgs(args),
  policyVersion: 'p@1',
  ...over,
})
const call = (over: Partial<{ runId: string; actionId: string; tool: string; args: unknown }> = {}) => ({
  runId: 'run_a',
  actionId: 's1.a1',
  tool: 'record_followup',
  args,
  ...over,
})

describe('TicketBook.issue', () => {
  it('binds a frozen ticket to the grant, with a fresh id and a default lifetime of 60 s', () => {
    const book = new TicketBook()
    const t1 = book.issue(grant(), 1_000)
    const t2 = book.issue(grant({ actionId: 's1.a2', ttlMs: 5 }), 2_000)
    assert.ok(Object.isFrozen(t1))
    assert.match(t1.id, /^tk_[a-z0-9]+_1$/)
    assert.match(t2.id, /^tk_[a-z0-9]+_2$/)
    assert.equal(t1.id.split('_')[1], t2.id.split('_')[1], 'one prefix per book')
    const { id: _, ...bound } = t1
    assert.deepEqual(
      [bound.runId, bound.actionId, bound.tool, bound.argsHash, bound.policyVersion, bound.expiresAt],
      ['run_a', 's1.a1', 'record_followup', hashArgs(args), 'p@1', 61_000],
    )
    assert.equal(t2.expiresAt, 2_005)
    assert.equal(book.outstanding, 2)
  })

  it('gives two books different prefixes, so their ids never collide by chance', () => {
    const prefixes = new Set(Array.from({ length: 20 }, () => new TicketBook().issue(grant()).id.split('_')[1]))
    assert.ok(prefixes.size > 15)
  })

  it('seals its prototype: nobody can patch redeem on every book', () => {
    assert.ok(Object.isFrozen(TicketBook.prototype))
    assert.throws(() => {
      ;(TicketBook.prototype as unknown as Record<string, unknown>).redeem = () => {}
    }, TypeError)
  })
})

describe('TicketBook.redeem', () => {
  it('accepts the ticket for exactly the call it was issued for, once', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant(), 1_000)
    book.redeem(ticket, call(), 1_000)
    assert.equal(book.outstanding, 0)
    assert.throws(() => book.redeem(ticket, call(), 1_000), {
      code: 'ticket_reused',
      message: /ticket tk_\w+ for tool "record_followup" was already used/,
    })
  })

  it('accepts the same arguments with their keys in another order', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    book.redeem(ticket, call({ args: { note: 'call back', ticketId: 'T-1' } }))
  })

  it('refuses a call without a ticket, naming the tool, run and action', () => {
    assert.throws(() => new TicketBook().redeem(undefined, call()), {
      code: 'ticket_missing',
      message: 'tool "record_followup" was invoked without a ticket (run run_a, action s1.a1)',
    })
  })

  it('refuses a ticket issued in another run, even with the same action, tool and arguments', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant({ runId: 'run_a' }))
    assert.throws(() => book.redeem(ticket, call({ runId: 'run_b' })), { code: 'ticket_mismatch', message: /is for run run_a, not run_b$/ })
  })

  it('refuses a ticket for another action of the same run', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    assert.throws(() => book.redeem(ticket, call({ actionId: 's1.a2' })), {
      code: 'ticket_mismatch',
      message: /is for action s1\.a1, not s1\.a2$/,
    })
  })

  it('refuses a ticket for another tool with the same arguments', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    assert.throws(() => book.redeem(ticket, call({ tool: 'delete_ticket' })), {
      code: 'ticket_mismatch',
      message: /is for tool "record_followup", not "delete_ticket"$/,
    })
  })

  it('refuses other arguments than those the decision saw', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    const other = { ticketId: 'T-1', note: 'call back', extra: true }
    assert.throws(() => book.redeem(ticket, call({ args: other })), {
      code: 'ticket_mismatch',
      message: new RegExp(`is for arguments ${hashArgs(args)}, not ${hashArgs(other)}$`),
    })
  })

  it('spends a ticket on a refused attempt: it cannot be retried with other arguments', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    assert.throws(() => book.redeem(ticket, call({ args: { ticketId: 'T-2', note: 'x' } })), { code: 'ticket_mismatch' })
    assert.throws(() => book.redeem(ticket, call()), { code: 'ticket_reused' })
    assert.equal(book.outstanding, 0)
  })

  it('accepts a ticket up to its expiry, and refuses (and spends) it after', () => {
    const book = new TicketBook()
    const onTime = book.issue(grant({ ttlMs: 100 }), 1_000)
    book.redeem(onTime, call(), 1_100)
    const late = book.issue(grant({ ttlMs: 100 }), 1_000)
    assert.throws(() => book.redeem(late, call(), 1_107), { code: 'ticket_expired', message: `ticket ${late.id} expired 7 ms ago` })
    assert.throws(() => book.redeem(late, call(), 1_050), { code: 'ticket_reused' })
  })

  it('refuses a copy of an issued ticket without spending the original', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant())
    assert.throws(() => book.redeem({ ...ticket }, call()), {
      code: 'ticket_invalid',
      message: `ticket ${ticket.id} is a copy, not the ticket that was issued`,
    })
    assert.equal(book.outstanding, 1)
    book.redeem(ticket, call())
  })

  it('refuses a look-alike forged from a recorded id, and a ticket of another book', () => {
    const book = new TicketBook()
    const real = book.issue(grant())
    const forged: Ticket = { ...real, id: real.id.replace(/_1$/, '_9') }
    assert.throws(() => book.redeem(forged, call()), {
      code: 'ticket_invalid',
      message: `ticket ${forged.id} for tool "record_followup" was not issued by this process`,
    })
    const foreign = new TicketBook().issue(grant())
    assert.throws(() => book.redeem(foreign, call()), { code: 'ticket_invalid' })
    assert.throws(() => book.redeem('tk_x_1' as unknown as Ticket, call()), { code: 'ticket_invalid' })
  })
})

describe('expired tickets are pruned', () => {
  it('prune drops expired tickets and keeps live ones, the expiry instant included', () => {
    const book = new TicketBook()
    book.issue(grant({ ttlMs: 10 }), 0)
    book.issue(grant({ ttlMs: 20 }), 0)
    book.issue(grant({ ttlMs: 30 }), 0)
    book.prune(20)
    assert.equal(book.outstanding, 2, 'the ticket expiring at 10 is gone; the one expiring at 20 is still valid at 20')
    book.prune(31)
    assert.equal(book.outstanding, 0)
  })

  it('prune with the default clock keeps tickets that have not expired', () => {
    const book = new TicketBook()
    book.issue(grant({ ttlMs: 60_000 }))
    book.issue(grant({ ttlMs: 1 }), 0)
    book.prune()
    assert.equal(book.outstanding, 1)
  })

  it('issue prunes expired tickets once more than 1024 are outstanding, and not before', () => {
    const book = new TicketBook()
    for (let i = 0; i < 1024; i++) book.issue(grant({ ttlMs: 1 }), 0)
    book.issue(grant({ ttlMs: 1 }), 100)
    assert.equal(book.outstanding, 1025, '1024 outstanding: nothing pruned yet')
    const live = book.issue(grant({ ttlMs: 1_000 }), 100)
    assert.equal(book.outstanding, 2, 'the 1025 expired ones were dropped before the new one went in')
    book.redeem(live, call(), 200)
  })

  it('issue does not prune tickets that are still valid, however many there are', () => {
    const book = new TicketBook()
    for (let i = 0; i < 1030; i++) book.issue(grant(), 0)
    assert.equal(book.outstanding, 1030)
  })
})

describe('the kernel book', () => {
  it('hands the issuer out once; tools built with defineTool redeem against that book only', async () => {
    const issue = claimTicketIssuer()
    assert.throws(() => claimTicketIssuer(), { code: 'ticket_invalid', message: /issued by the kernel alone/ })
    let ran = 0
    const tool = defineTool({
      name: 'record_followup',
      description: 'd',
      input: z.object({ ticketId: z.string(), note: z.string() }),
      sideEffect: 'external',
      run: () => ({ output: ++ran }),
    })
    const io = { runId: 'run_a', actionId: 's1.a1', idempotencyKey: 'k', attempt: 1, signal: new AbortController().signal }
    // Where tickets are also bound to the tool definition the loop judged (`targetOf`), the grant names it as the loop does.
    const targetOf = (toolModule as { targetOf?: (tool: Tool) => object | undefined }).targetOf
    const forTool = (over: Partial<Grant> = {}) => ({ ...grant(over), ...(targetOf ? { target: targetOf(tool) } : {}) }) as Grant
    await assert.rejects(tool.invoke(new TicketBook().issue(forTool()), args, io), { code: 'ticket_invalid' })
    await assert.rejects(tool.invoke(issue(forTool({ runId: 'run_b' })), args, io), { code: 'ticket_mismatch' })
    assert.equal(ran, 0)
    assert.deepEqual(await tool.invoke(issue(forTool()), args, io), { output: 1 })
    // The issuer passes its clock through, and redeemTicket its own.
    const old = issue(grant({ ttlMs: 10 }), 0)
    assert.throws(() => redeemTicket(old, call(), 11), { code: 'ticket_expired' })
    const fresh = issue(grant({ ttlMs: 10 }), 0)
    redeemTicket(fresh, call(), 10)
  })
})

describe('TicketBook: the arguments object a ticket was issued for', () => {
  it('accepts that very object, deeply frozen, without hashing it again, and refuses other content', async () => {
    const { deepFreeze } = await import('../../core/kit/freeze.ts')
    const book = new TicketBook()
    const judged = deepFreeze({ ticketId: 'T-1', note: 'call back' })
    book.redeem(book.issue(grant(), 1_000, judged), call({ args: judged }), 1_001)
    // An equal copy passes on its hash; different content is refused whatever was remembered.
    book.redeem(book.issue(grant(), 1_000, judged), call({ args: { ...judged } }), 1_001)
    const other = deepFreeze({ ticketId: 'T-2', note: 'call back' })
    assert.throws(() => book.redeem(book.issue(grant(), 1_000, judged), call({ args: other }), 1_001), { code: 'ticket_mismatch' })
  })

  it('hashes again when the object it was issued for is not deeply frozen: a change after issue is caught', () => {
    const book = new TicketBook()
    const judged = { ticketId: 'T-1', note: 'call back' }
    const ticket = book.issue(grant(), 1_000, judged)
    judged.ticketId = 'T-9'
    assert.throws(() => book.redeem(ticket, call({ args: judged }), 1_001), { code: 'ticket_mismatch' })
  })

  it('says ticket_reused for a redeemed ticket, and ticket_invalid for a copy of one', () => {
    const book = new TicketBook()
    const ticket = book.issue(grant(), 1_000)
    book.redeem(ticket, call(), 1_001)
    assert.throws(() => book.redeem(ticket, call(), 1_002), { code: 'ticket_reused' })
    assert.throws(() => book.redeem({ ...ticket }, call(), 1_002), { code: 'ticket_invalid' })
  })

  it('remembers at least the last 4,096 redeemed tickets, in generations, however many pass through', () => {
    const book = new TicketBook()
    const spent: Ticket[] = []
    for (let i = 0; i < 4096 * 3 + 10; i++) {
      const ticket = book.issue(grant(), 1_000)
      book.redeem(ticket, call(), 1_001)
      spent.push(ticket)
    }
    // Three generations of 4,096 filled; the one before the current (10 tickets) is remembered whole.
    const kept = 4096 + 10
    assert.throws(() => book.redeem(spent.at(-kept - 1), call(), 1_002), { code: 'ticket_invalid' }, 'the newest forgotten one')
    assert.throws(() => book.redeem(spent.at(-kept), call(), 1_002), { code: 'ticket_reused' }, 'the oldest remembered one')
    assert.throws(() => book.redeem(spent.at(-1), call(), 1_002), { code: 'ticket_reused' })
    assert.throws(() => book.redeem(spent[0], call(), 1_002), { code: 'ticket_invalid' })
  })
})
