/**
 * core/kernel/tool-call.ts: one call in flight. A tool built by defineTool is called through its body
 * directly (core/kernel/tool.ts directInvoke), behind the same ticket check as its `invoke`: a body
 * that answers at once settles the call at once, with no promise and no timer; one that answers later
 * is timed and can be aborted. An abort without grace fails a call whose answer was not taken yet,
 * whichever way it came. This file claims the kernel's ticket issuer itself (effects.ts is not loaded).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { hashArgs } from '../../core/kit/hash.ts'
import { claimTicketIssuer } from '../../core/kernel/ticket.ts'
import { defineTool, directInvoke, targetOf } from '../../core/kernel/tool.ts'
import { ToolCall } from '../../core/kernel/tool-call.ts'
import type { Tool, ToolIO, ToolResult } from '../../core/contracts/services/tools.ts'

const issue = claimTicketIssuer()
const io = { runId: 'run_c', actionId: 's1.a1', idempotencyKey: 'k', attempt: 1, fencingToken: undefined }
const args = { id: 'a' }

function toolOf(run: (args: unknown, io: ToolIO) => ToolResult | Promise<ToolResult>, timeoutMs = 30_000): Tool {
  return defineTool({ name: 'probe', description: 'probe', input: z.object({ id: z.string() }), sideEffect: 'none', timeoutMs, run })
}

function callOf(tool: Tool, direct = true, ticketArgs: unknown = args, extra: Partial<ToolIO> = {}): ToolCall {
  const ticket = issue({
    runId: io.runId,
    actionId: io.actionId,
    tool: tool.name,
    argsHash: hashArgs(ticketArgs),
    policyVersion: 'p',
    target: targetOf(tool),
  })
  return new ToolCall(tool, ticket, args, { ...io, ...extra }, tool.timeoutMs, direct ? directInvoke(tool) : undefined)
}

describe('ToolCall: a body that answers at once', () => {
  it('settles the call at once, not as a promise', () => {
    const call = callOf(toolOf(() => ({ output: 1, observation: 'one' })))
    assert.deepEqual(call.result, { status: 'fulfilled', value: { output: 1, observation: 'one' } })
  })

  it('settles a body that throws as rejected, at once', () => {
    const call = callOf(
      toolOf(() => {
        throw new Error('body failed')
      }),
    )
    assert.ok(!(call.result instanceof Promise))
    assert.equal(call.result.status, 'rejected')
    assert.match(String((call.result as PromiseRejectedResult).reason), /body failed/)
  })

  it('still checks the ticket: a ticket for other arguments is refused, and the body does not run', () => {
    let ran = false
    const tool = toolOf(() => {
      ran = true
      return { output: null }
    })
    const call = callOf(tool, true, { id: 'other' })
    assert.equal((call.result as PromiseRejectedResult).status, 'rejected')
    assert.equal((call.result as PromiseRejectedResult).reason.code, 'ticket_mismatch')
    assert.equal(ran, false)
  })

  it('fails when aborted without grace before its answer is taken, and keeps its answer with a grace', () => {
    const reason = new Error('cancelled by test')
    const abrupt = callOf(toolOf(() => ({ output: 1 })))
    abrupt.abort(reason)
    assert.deepEqual(abrupt.result, { status: 'rejected', reason })
    const graced = callOf(toolOf(() => ({ output: 2 })))
    graced.abort(reason, 50)
    assert.deepEqual(graced.result, { status: 'fulfilled', value: { output: 2 } })
  })

  it('is a promise, as before, for a tool called through invoke (not built by defineTool, or wrapped)', async () => {
    const call = callOf(
      toolOf(() => ({ output: 3 })),
      false,
    )
    assert.ok(call.result instanceof Promise)
    assert.deepEqual(await call.result, { status: 'fulfilled', value: { output: 3 } })
  })
})

describe('ToolCall: a body that answers later', () => {
  it('is a promise of how it settled', async () => {
    const call = callOf(toolOf(async () => ({ output: 'later' })))
    assert.ok(call.result instanceof Promise)
    assert.deepEqual(await call.result, { status: 'fulfilled', value: { output: 'later' } })
  })

  it('times out with tool_timeout, and an abort without grace fails it at once', async () => {
    const slow = callOf(toolOf(() => new Promise<ToolResult>(() => {}), 20))
    const settled = await slow.result
    assert.equal(settled.status, 'rejected')
    assert.equal((settled as PromiseRejectedResult).reason.code, 'tool_timeout')
    const aborted = callOf(toolOf(() => new Promise<ToolResult>(() => {})))
    const reason = new Error('stop')
    aborted.abort(reason)
    assert.deepEqual(await aborted.result, { status: 'rejected', reason })
  })
})

describe('ToolCall: what it says when a tool breaks its contract or overruns', () => {
  it('fails a hand-written invoke that gives no promise, with a TypeError saying so', () => {
    const raw = { ...toolOf(() => ({ output: 1 })), invoke: () => ({ output: 1 }) } as unknown as Tool
    const call = callOf(raw, false)
    assert.equal(call.result instanceof Promise, false)
    assert.equal((call.result as PromiseRejectedResult).status, 'rejected')
    const reason = (call.result as PromiseRejectedResult).reason
    assert.ok(reason instanceof TypeError)
    assert.equal(reason.message, 'invoke: no promise')
  })

  it('names the tool and its limit when it times out', async () => {
    const settled = await callOf(toolOf(() => new Promise<ToolResult>(() => {}), 15)).result
    assert.equal((settled as PromiseRejectedResult).reason.message, 'probe did not finish within 15 ms')
  })

  it('settles with the rejection of a body that fails later, and keeps the first outcome', async () => {
    const late = callOf(toolOf(() => Promise.reject(new Error('later failure'))))
    const settled = await late.result
    assert.equal(settled.status, 'rejected')
    assert.equal((settled as PromiseRejectedResult).reason.message, 'later failure')
    let fail!: (e: Error) => void
    const slow = callOf(toolOf(() => new Promise<ToolResult>((_, reject) => (fail = reject)), 10))
    const first = await slow.result
    fail(new Error('too late'))
    await new Promise((r) => setImmediate(r))
    assert.equal((first as PromiseRejectedResult).reason.code, 'tool_timeout')
  })

  it('fails a call aborted without grace at once: an answer that comes right after does not count', async () => {
    let answer!: (r: ToolResult) => void
    const call = callOf(toolOf(() => new Promise<ToolResult>((ok) => (answer = ok))))
    const reason = new Error('cancel')
    call.abort(reason)
    answer({ output: 'too late' })
    assert.deepEqual(await call.result, { status: 'rejected', reason })
  })

  it('gives a call aborted with a grace that long to finish: an answer within it stands, none fails it after', async () => {
    let answer!: (r: ToolResult) => void
    const graced = callOf(toolOf(() => new Promise<ToolResult>((ok) => (answer = ok))))
    const reason = new Error('cancel')
    graced.abort(reason, 200)
    setTimeout(() => answer({ output: 'committed' }), 5)
    assert.deepEqual(await graced.result, { status: 'fulfilled', value: { output: 'committed' } })
    const silent = callOf(toolOf(() => new Promise<ToolResult>(() => {})))
    const t0 = performance.now()
    silent.abort(reason, 20)
    assert.deepEqual(await silent.result, { status: 'rejected', reason })
    assert.ok(performance.now() - t0 >= 15, 'not before its grace')
  })
})

describe('ToolCall: what the tool sees of its call', () => {
  it('a signal, aborted with the reason when the call is aborted, whether it asked before or after', async () => {
    let seen: AbortSignal | undefined
    const early = callOf(
      toolOf((_, io) => {
        seen = io.signal
        return new Promise<ToolResult>(() => {})
      }),
    )
    assert.ok(seen instanceof AbortSignal)
    assert.equal(seen.aborted, false)
    const reason = new Error('stop now')
    early.abort(reason)
    assert.equal(seen.aborted, true)
    assert.equal(seen.reason, reason)
    let later: ToolIO | undefined
    const asksLate = callOf(
      toolOf((_, io) => {
        later = io
        return new Promise<ToolResult>(() => {})
      }),
    )
    asksLate.abort(reason)
    assert.equal(later!.signal.aborted, true, 'aborted from the start when asked after the abort')
    assert.equal(later!.signal.reason, reason)
  })

  it('the constraints as recorded, in a frozen copy', () => {
    let seen: ToolIO['constraints']
    const constraints = { maxAmount: 100 }
    callOf(
      toolOf((_, io) => {
        seen = io.constraints
        return { output: null }
      }),
      true,
      args,
      { constraints },
    )
    assert.deepEqual(seen, { maxAmount: 100 })
    assert.notEqual(seen, constraints)
    assert.ok(Object.isFrozen(seen))
  })
})
