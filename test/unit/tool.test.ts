/**
 * core/kernel/tool.ts: defineTool checks what a tool claims (core/contracts/checks/tool.ts), fills in safe defaults, and closes the body
 * behind a ticket; asDefined gives the loop the contract a tool was defined with, whatever a registry
 * copy says. This file claims the kernel's ticket issuer itself (core/kernel/effects.ts is not loaded here).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { hashArgs } from '../../core/kit/hash.ts'
import { claimTicketIssuer, TicketBook, type Grant } from '../../core/kernel/ticket.ts'
import * as toolModule from '../../core/kernel/tool.ts'
import { asDefined, defineTool } from '../../core/kernel/tool.ts'
import type { Tool, ToolDefinition } from '../../core/contracts/services/tools.ts'

const issue = claimTicketIssuer()
const input = z.object({ id: z.string(), note: z.string().default('none') })
type Args = z.infer<typeof input>
const def = (over: Partial<ToolDefinition<Args>> = {}): ToolDefinition<Args> => ({
  name: 'crm_note',
  description: 'Add a note',
  input,
  sideEffect: 'external',
  run: (args) => ({ output: args }),
  ...over,
})
const io = (over: Partial<{ runId: string; actionId: string }> = {}) => ({
  runId: 'run_t',
  actionId: 's1.a1',
  idempotencyKey: 'k',
  attempt: 1,
  signal: new AbortController().signal,
  ...over,
})
/** Where tickets are also bound to the tool definition the loop judged (`targetOf`), the grant names it as the loop does. */
const targetOf = (toolModule as { targetOf?: (tool: Tool) => object | undefined }).targetOf
const ticketFor = (tool: string, args: unknown, runId = 'run_t', actionId = 's1.a1', defined?: Tool) =>
  issue({
    runId,
    actionId,
    tool,
    argsHash: hashArgs(args),
    policyVersion: 'p',
    ...(defined && targetOf ? { target: targetOf(defined) } : {}),
  } as Grant)

describe('defineTool: names', () => {
  it('accepts letters, digits, _ and -, starting with a letter, up to 64 characters', () => {
    for (const name of ['a', 'lookup_policy', 'Crm-Read2', 'x'.repeat(64)]) assert.equal(defineTool(def({ name })).name, name)
  })

  it('refuses any other name', () => {
    for (const name of ['', '1tool', '_tool', 'crm.read', 'crm read', 'crm/read', 'x'.repeat(65), 'tool\n', 'é']) {
      assert.throws(
        () => defineTool(def({ name })),
        {
          code: 'invalid_input',
          message: `tool name "${name}" must match /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/ (letters, digits, _ and -, starting with a letter)`,
        },
        JSON.stringify(name),
      )
    }
  })
})

describe('defineTool: the contract', () => {
  it('refuses a side effect it does not know', () => {
    assert.throws(() => defineTool(def({ sideEffect: 'remote' as 'none' })), {
      code: 'invalid_input',
      message: 'tool "crm_note": sideEffect must be none, local or external, got "remote"',
    })
  })

  it('takes a tool without side effects as idempotent, and one with side effects as not, unless told', () => {
    assert.equal(defineTool(def({ sideEffect: 'none' })).idempotent, true)
    assert.equal(defineTool(def({ sideEffect: 'local' })).idempotent, false)
    assert.equal(defineTool(def({ sideEffect: 'external' })).idempotent, false)
    assert.equal(defineTool(def({ sideEffect: 'external', idempotent: true })).idempotent, true)
    assert.equal(defineTool(def({ sideEffect: 'none', idempotent: false })).idempotent, false)
  })

  it('fills in a 30 s time limit, no approval, no retries and no tags, and keeps what it is given', () => {
    const plain = defineTool(def())
    assert.deepEqual([plain.timeoutMs, plain.needsApproval, plain.retries, plain.tags], [30_000, false, 0, []])
    const given = defineTool(def({ timeoutMs: 5, needsApproval: true, retries: 2, tags: ['crm'] }))
    assert.deepEqual([given.timeoutMs, given.needsApproval, given.retries, given.tags], [5, true, 2, ['crm']])
    assert.equal(given.description, 'Add a note')
    assert.equal(given.input, input)
  })

  it('derives the JSON Schema from zod without $schema, keeps a given one, and falls back to an object', () => {
    const derived = defineTool(def()).inputSchema as Record<string, unknown>
    assert.equal(derived.type, 'object')
    assert.ok(!('$schema' in derived))
    assert.deepEqual(Object.keys(derived.properties as object), ['id', 'note'])
    const given = { type: 'object', properties: { id: { type: 'string' } }, $schema: 'x' }
    assert.deepEqual(defineTool(def({ inputSchema: given })).inputSchema, { type: 'object', properties: { id: { type: 'string' } } })
    const bare = { safeParse: (a: unknown) => ({ success: true as const, data: a as Args }) }
    assert.deepEqual(defineTool(def({ input: bare })).inputSchema, { type: 'object' })
  })

  it('is frozen', () => {
    const tool = defineTool(def())
    assert.ok(Object.isFrozen(tool))
    assert.throws(() => {
      ;(tool as { sideEffect: string }).sideEffect = 'none'
    }, TypeError)
  })

  it('derives idempotency keys and footprints from validated arguments, and nothing from invalid ones', () => {
    const tool = defineTool(
      def({
        idempotencyKey: (a) => `note:${a.id}:${a.note}`,
        footprint: (a) => ({ writes: [`crm:${a.id}`] }),
      }),
    )
    assert.equal(tool.idempotencyKey!({ id: 'c1' }), 'note:c1:none', 'defaults applied: the parsed arguments')
    assert.equal(tool.idempotencyKey!({ id: 5 }), '')
    assert.deepEqual(tool.footprint!({ id: 'c1' }), { writes: ['crm:c1'] })
    assert.deepEqual(tool.footprint!({}), {})
    const plain = defineTool(def())
    assert.equal(plain.idempotencyKey, undefined)
    assert.equal(plain.footprint, undefined)
  })

  it('passes reconcile through', () => {
    const reconcile = async () => ({ committed: true as const })
    assert.equal(defineTool(def({ reconcile })).reconcile, reconcile)
  })
})

describe('defineTool: artifacts, previews, constraints and cost', () => {
  it('takes artifactAboveBytes as a whole number of bytes of at least 1, and refuses anything else, saying what it got', () => {
    assert.equal(defineTool(def({ artifactAboveBytes: 1 })).artifactAboveBytes, 1)
    assert.equal(defineTool(def({ artifactAboveBytes: 4096 })).artifactAboveBytes, 4096)
    assert.equal(defineTool(def()).artifactAboveBytes, undefined)
    for (const above of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, '10' as unknown as number]) {
      assert.throws(
        () => defineTool(def({ artifactAboveBytes: above })),
        {
          code: 'invalid_input',
          message: `tool "crm_note": artifactAboveBytes must be a whole number of bytes of at least 1, got ${JSON.stringify(above)}`,
        },
        String(above),
      )
    }
  })

  it('runs the preview on the arguments as the schema parses them, and refuses arguments it does not take', async () => {
    const seen: unknown[] = []
    const tool = defineTool(
      def({
        preview: (args, io) => {
          seen.push(args, io.runId)
          return { summary: `note on ${args.id}` } as never
        },
      }),
    )
    const pio = { runId: 'run_p', actionId: 's1.a1', signal: new AbortController().signal }
    assert.deepEqual(await tool.preview!({ id: 'c1' }, pio), { summary: 'note on c1' })
    assert.deepEqual(seen, [{ id: 'c1', note: 'none' }, 'run_p'], 'defaults applied: the parsed arguments')
    await assert.rejects(async () => tool.preview!({ id: 5 }, pio), {
      code: 'invalid_arguments',
      message: 'arguments for crm_note do not match its schema',
    })
    assert.equal(seen.length, 2, 'the preview did not run on arguments the schema refuses')
    assert.equal(defineTool(def()).preview, undefined)
  })

  it('keeps the constraints it enforces and its cost as frozen copies, and nothing when it declares none', () => {
    const enforces = ['maxAmount' as const]
    const cost = { tokens: 10, costUsd: 0.5 }
    const tool = defineTool(def({ enforces, cost }))
    assert.deepEqual(tool.enforces, ['maxAmount'])
    assert.notEqual(tool.enforces, enforces)
    assert.ok(Object.isFrozen(tool.enforces))
    assert.deepEqual(tool.cost, { tokens: 10, costUsd: 0.5 })
    assert.notEqual(tool.cost, cost)
    assert.ok(Object.isFrozen(tool.cost))
    enforces.push('pathPrefix' as never)
    cost.costUsd = 0
    assert.deepEqual(
      [tool.enforces, tool.cost],
      [['maxAmount'], { tokens: 10, costUsd: 0.5 }],
      'later changes to the definition change nothing',
    )
    const plain = defineTool(def())
    assert.ok(!('enforces' in plain) && !('cost' in plain))
  })
})

describe('defineTool: invoke', () => {
  it('runs the body with the validated arguments and io, only with a kernel ticket for this exact call', async () => {
    let seen: unknown
    const tool = defineTool(
      def({
        run: (args, io) => {
          seen = { args, run: io.runId }
          return { output: 'ok' }
        },
      }),
    )
    const args = { id: 'c1' }
    assert.deepEqual(await tool.invoke(ticketFor('crm_note', args, 'run_t', 's1.a1', tool), args, io()), { output: 'ok' })
    assert.deepEqual(seen, { args: { id: 'c1', note: 'none' }, run: 'run_t' })
  })

  it('refuses a missing ticket, one of a book of its own, one for another tool, run or action', async () => {
    let ran = 0
    const tool = defineTool(def({ run: () => ({ output: ++ran }) }))
    const args = { id: 'c1' }
    await assert.rejects(tool.invoke(undefined, args, io()), { code: 'ticket_missing' })
    await assert.rejects(
      tool.invoke(
        new TicketBook().issue({ runId: 'run_t', actionId: 's1.a1', tool: 'crm_note', argsHash: hashArgs(args), policyVersion: 'p' }),
        args,
        io(),
      ),
      { code: 'ticket_invalid' },
    )
    await assert.rejects(tool.invoke(ticketFor('crm_read', args, 'run_t', 's1.a1', tool), args, io()), { code: 'ticket_mismatch' })
    await assert.rejects(tool.invoke(ticketFor('crm_note', args, 'run_other', 's1.a1', tool), args, io()), { code: 'ticket_mismatch' })
    await assert.rejects(tool.invoke(ticketFor('crm_note', args, 'run_t', 's1.a2', tool), args, io()), { code: 'ticket_mismatch' })
    assert.equal(ran, 0)
  })

  it('refuses arguments that do not match the schema, after spending the ticket', async () => {
    let ran = 0
    const tool = defineTool(def({ run: () => ({ output: ++ran }) }))
    const bad = { id: 7 }
    const ticket = ticketFor('crm_note', bad, 'run_t', 's1.a1', tool)
    await assert.rejects(tool.invoke(ticket, bad, io()), {
      code: 'invalid_arguments',
      message: 'arguments for crm_note do not match its schema',
    })
    await assert.rejects(tool.invoke(ticket, bad, io()), { code: 'ticket_reused' })
    assert.equal(ran, 0)
  })

  it("passes the body's failure through", async () => {
    const tool = defineTool(
      def({
        run: async () => {
          throw new Error('crm down')
        },
      }),
    )
    const args = { id: 'c1' }
    await assert.rejects(tool.invoke(ticketFor('crm_note', args, 'run_t', 's1.a1', tool), args, io()), /crm down/)
  })
})

describe('asDefined', () => {
  it('returns a copy that says what the tool was defined with as it is', () => {
    const tool = defineTool(def())
    const copy = { ...tool, owner: 'crm@1.0.0' }
    assert.equal(asDefined(copy), copy)
    assert.equal(asDefined(tool), tool)
  })

  it('restores each field of the contract a registry copy relabelled, keeping the rest of the copy', () => {
    const tool = defineTool(def({ sideEffect: 'external', timeoutMs: 1_000, retries: 1, needsApproval: true }))
    const relabels: Partial<Tool>[] = [
      { name: 'crm_read' },
      { sideEffect: 'none' },
      { idempotent: true },
      { timeoutMs: 999_999 },
      { needsApproval: false },
      { retries: 9 },
    ]
    for (const relabel of relabels) {
      const copy = { ...tool, owner: 'crm@1.0.0', ...relabel } as Tool
      const seen = asDefined(copy)
      assert.notEqual(seen, copy, JSON.stringify(relabel))
      assert.deepEqual(
        [seen.name, seen.sideEffect, seen.idempotent, seen.timeoutMs, seen.needsApproval, seen.retries],
        ['crm_note', 'external', false, 1_000, true, 1],
        JSON.stringify(relabel),
      )
      assert.equal(seen.owner, 'crm@1.0.0')
      assert.equal(seen.invoke, tool.invoke)
      assert.ok(Object.isFrozen(seen))
    }
  })

  it('takes a tool built some other way as it is', () => {
    const handmade = {
      name: 'x',
      description: '',
      input,
      inputSchema: {},
      sideEffect: 'none',
      idempotent: true,
      timeoutMs: 1,
      needsApproval: false,
      retries: 0,
      invoke: async () => ({ output: 1 }),
    } as unknown as Tool
    assert.equal(asDefined(handmade), handmade)
  })
})

describe('targetOf', () => {
  it("is the definition's identity for a defined tool and its copies, and nothing for a tool written by hand", () => {
    assert.ok(targetOf, 'core/kernel/tool.ts exports targetOf')
    const tool = defineTool({
      name: 'lookup',
      description: 'reads',
      input: z.object({}),
      sideEffect: 'none',
      run: () => ({ output: null, observation: 'ok' }),
    })
    const identity = targetOf!(tool)
    assert.equal(typeof identity, 'object')
    assert.equal(targetOf!({ ...tool }), identity, 'a registry copy keeps the same invoke, so the same identity')
    const handWritten = { ...tool, invoke: async () => ({ ok: true, output: null, observation: 'ok' }) } as unknown as Tool
    assert.equal(targetOf!(handWritten), undefined)
  })
})
