/**
 * Running one tool in a test the way the kernel runs it: inside a real run of a real AgentRuntime, so
 * the call gets a ticket only after a recorded policy decision, like any call in production. There is
 * no shortcut: tickets are the kernel's alone (core/kernel/ticket.ts), and tests use the same door as users.
 *
 * The agent is minimal: an in-memory store, a model that proposes the call (after harmless calls to a
 * no-op tool, when the test wants another action id than `s1.a1`), a policy that allows, and a verifier
 * that accepts. What the call came to is read back from the run's events.
 */
import { Context } from 'cordis'
import {
  createAgentContext,
  CordageError,
  defineTool,
  type Code,
  type ModelRequest,
  type ModelResponse,
  type RunEvent,
  type Tool,
  type ToolResult,
} from 'cordage'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import { z } from 'zod'
import { MemoryStore } from '../plugins/store-memory/memory-store.ts'

export interface InvokeOptions {
  /** The run's id (default `run_1`); a tool's idempotency key defaults to `<runId>/<actionId>`. */
  runId?: string
  /** `sN.aM`: the call is the M-th of step N (default `s1.a1`). */
  actionId?: string
  /** Aborting it cancels the run while the tool runs. */
  signal?: AbortSignal
  /** The policy allows the call only within these (a constrained allow; the tool gets them in io.constraints). */
  constraints?: { maxAmount?: number; pathPrefix?: string; timeLimitMs?: number }
}

const noop = defineTool({
  name: 'harness_noop',
  description: 'does nothing',
  input: z.object({}),
  sideEffect: 'none',
  run: () => ({ output: 'ok' }),
})

/**
 * Run `tool` once with `args` in a run of its own. Resolves with what `tool/end` recorded (and the
 * `slice/update` of its `state`, as `state`); rejects with
 * a CordageError carrying the code of `tool/error` (including `invalid_arguments` for arguments the
 * tool's schema refuses, which never reach the tool).
 */
export async function invokeTool(tool: Tool, args: unknown, options: InvokeOptions = {}): Promise<ToolResult & { events: RunEvent[] }> {
  const runId = options.runId ?? 'run_1'
  const actionId = options.actionId ?? 's1.a1'
  const found = /^s(\d+)\.a(\d+)$/.exec(actionId)
  if (!found) throw new Error(`actionId must look like s1.a1, got ${actionId}`)
  const [step, index] = [Number(found[1]), Number(found[2])]

  const ctx = createAgentContext(new Context(), 'harness')
  const store = new MemoryStore(100_000)
  // Owned by the harness plugin, as a registry would record them: so a tool may keep state in its slice.
  const tools = (tool.name === noop.name ? [tool] : [tool, noop]).map((t) => ({ ...t, owner: 'harness@1.0.0' }))
  // Services count only when a plugin (something with a manifest) provides them: run/start records who did.
  const harness = {
    name: 'harness',
    manifest: {
      name: 'harness',
      version: '1.0.0',
      provides: { store: '1.0.0', tools: '1.0.0', context: '1.0.0', policy: '1.0.0', verifier: '1.0.0', model: '1.0.0' },
    },
    apply(c: Context) {
      c.set('store', store)
      c.set('tools', {
        register: () => () => {},
        get: (name: string) => tools.find((t) => t.name === name),
        list: () => tools,
        visible: () => tools,
      })
      c.set('context', { assemble: () => ({ messages: [], tokens: 0 }) })
      c.set('policy', {
        version: 'harness',
        decide: (request: { tool: Tool }) => ({
          verdict: 'allow',
          ruleId: 'harness',
          reason: 'the test harness allows every call',
          ...(options.constraints && request.tool.name === tool.name ? { constraints: options.constraints } : {}),
        }),
      })
      c.set('verifier', { verify: () => ({ ok: true, evidence: [{ kind: 'harness', ref: 'harness' }] }) })
      c.set('model', {
        async respond(request: ModelRequest): Promise<ModelResponse> {
          const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
          if (request.stepIndex < step) return { decision: { kind: 'tool_calls', calls: [{ name: noop.name, args: {} }] }, usage }
          if (request.stepIndex === step) {
            const calls = Array.from({ length: index - 1 }, () => ({ name: noop.name, args: {} }))
            return { decision: { kind: 'tool_calls', calls: [...calls, { name: tool.name, args }] }, usage }
          }
          return { decision: { kind: 'final', text: 'done' }, usage }
        },
      })
    },
  }
  ctx.plugin(harness)
  const agent = new AgentRuntime(ctx, {
    writer: KernelWriter,
    name: 'harness',
    budgets: { maxSteps: step + 2 },
    parallelTools: false,
    modelRetry: { attempts: 1, backoffMs: 1 },
  })
  const handle = agent.start('run the tool', { runId })
  const onAbort = () => {
    agent.cancel(runId, { by: 'test' }).catch(() => {})
  }
  options.signal?.addEventListener('abort', onAbort, { once: true })
  if (options.signal?.aborted) onAbort()
  try {
    await handle.done
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
  }
  const events = await store.load(runId)
  const outcome = events.findLast((e) => e.actionId === actionId && (e.type === 'tool/end' || e.type === 'tool/error'))
  if (!outcome) {
    const end = events.find((e) => e.type === 'run/end') as RunEvent<'run/end'> | undefined
    throw new Error(`the call never settled: the run ended ${end?.data.status} ${end?.data.failureCode ?? ''} ${end?.data.reason ?? ''}`)
  }
  if (outcome.type === 'tool/error') {
    const data = (outcome as RunEvent<'tool/error'>).data
    throw Object.assign(new CordageError(data.code as Code, data.message), { events })
  }
  const data = (outcome as RunEvent<'tool/end'>).data
  return {
    output: data.output,
    observation: data.observation,
    receipt: data.receipt,
    usage: data.usage,
    handoff: data.handoff,
    state: (events.find((e) => e.type === 'slice/update' && e.actionId === actionId) as RunEvent<'slice/update'> | undefined)?.data,
    events,
  }
}
