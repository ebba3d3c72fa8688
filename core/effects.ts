/**
 * @module effects
 * Running one authorized action: the ticket, the side-effect ledger, the call under its time limit,
 * and what its outcome means. The rules (docs/durability.md has the table):
 *
 * - A tool with side effects writes an intent to the ledger (idempotency key, arguments hash, policy
 *   version) in the same transaction as `tool/start`, and its outcome with `tool/end` / `tool/error`.
 * - Before that, the ledger is asked about the key: other arguments → `idempotency_conflict`, already
 *   committed → the recorded result is used and the tool is not called again, pending in another run →
 *   wait for it; an idempotent tool may then take the key over (the target deduplicates).
 * - A call whose outcome is not known (the process died mid-call, or a side-effecting call timed out)
 *   is an unknown effect: an idempotent tool runs again with the same key, a tool that can `reconcile`
 *   is asked, anything else waits for a person (WAITING_RECONCILIATION, `unknown_effect`).
 * - Cancelled mid-call, a side-effecting call gets a short grace to finish: if it commits, the run says so.
 */
import { classify, CordageError, type Code } from './errors.ts'
import type { RunEvent } from './events.ts'
import type { Recorder, EventIds } from './recorder.ts'
import type { Effect, EffectWrite, StoreService } from './services/store.ts'
import type { Reconciled, Tool } from './services/tools.ts'
import type { ActionState, RunState } from './state.ts'
import type { TerminalStatus, WaitingStatus } from './status.ts'
import { issueTicket } from './ticket.ts'
import { ToolCall } from './tool-call.ts'
import { KernelProducer } from './version.ts'

export type Next = 'continue' | 'halt'

/** Why a run records a checkpoint before it waits. */
export type Checkpoint = 'approval' | 'user' | 'suspend' | 'reconciliation'

export interface PauseDetail {
  /** The action the run waits on. */
  actionId?: string
  /** Record tool/approval-requested with these facts (after the checkpoint). */
  approval?: RunEvent<'tool/approval-requested'>['data']
  /** Why, where a code applies (run/paused.code). */
  code?: Code
}

/** What running an action needs from the run's driver. */
export interface DriverPort {
  readonly runId: string
  readonly state: RunState
  readonly rec: Recorder
  readonly signal: AbortSignal
  readonly options: { ticketTtlMs: number; observationChars: number; cancelGraceMs: number; effectWaitMs: number }
  readonly cancelling: boolean
  idsOf(actionId: string | undefined, causation?: number): EventIds
  store(): StoreService
  /** Flush buffered events (with these ledger writes) under the run's lease. */
  flush(effects?: EffectWrite[]): Promise<void>
  /** The call in flight, so cancellation can reach it. */
  track(call: ToolCall | undefined): void
  /** Note a side effect that committed after cancellation was requested, or whose outcome is unknown. */
  noteEffect(kind: 'committed' | 'unknown', effect: { actionId: string; tool: string; receipt?: unknown; key?: string }): void
  reject(action: ActionState, code: Code, observation: string, causation?: number): Promise<Next>
  pause(status: WaitingStatus, reason: string, checkpoint: Checkpoint, detail?: PauseDetail): Promise<Next>
  end(status: TerminalStatus, failureCode: Code | undefined, reason?: string): Promise<Next>
  /**
   * Another run took the idempotency key between the ledger look-up and the intent: write what was
   * recorded before the refused `tool/start` (the model's answer, the decision), then rebuild state from
   * the store, so the action is tried again from its decision and the model is not asked again.
   */
  lostKeyRace(): Promise<void>
}

export class EffectRunner {
  constructor(private run: DriverPort) {}

  /** The idempotency key of an action: the tool's own (prefixed with its name) or `<runId>/<actionId>`. */
  keyOf(action: ActionState, tool: Tool): string {
    const own = tool.idempotencyKey?.(action.args)
    return own ? `${tool.name}:${own}` : `${this.run.runId}/${action.id}`
  }

  /** Run an action that policy (or a person) authorized under `policyVersion`. */
  async execute(action: ActionState, tool: Tool, policyVersion: string, causation: number): Promise<Next> {
    const run = this.run
    const effectful = tool.sideEffect !== 'none'
    const key = this.keyOf(action, tool)
    let takeover = false
    if (effectful) {
      const verdict = await this.checkLedger(action, tool, key)
      if (verdict === 'takeover') takeover = true
      else if (verdict) return verdict
    }
    const producer = tool.owner ?? KernelProducer
    for (let attempt = action.attempts + 1; ; attempt++) {
      const ticket = issueTicket({ runId: run.runId, actionId: action.id, tool: tool.name, argsHash: action.argsHash, policyVersion, ttlMs: run.options.ticketTtlMs })
      const started = run.rec.record('tool/start', { tool: tool.name, attempt, ticket: ticket.id, idempotencyKey: key, argsHash: action.argsHash, policyVersion, timeoutMs: tool.timeoutMs }, KernelProducer, run.idsOf(action.id, causation))
      const intent: EffectWrite[] = effectful
        ? [{ op: 'intent', key, runId: run.runId, actionId: action.id, tool: tool.name, argsHash: action.argsHash, policyVersion, attempt, at: Date.now(), takeover: takeover || undefined }]
        : []
      try {
        // The model's decision, the policy decision and the intent are durable before the tool runs.
        await run.flush(intent)
      } catch (error) {
        if (!CordageError.is(error, 'effect_exists') && !CordageError.is(error, 'idempotency_conflict')) throw error
        await run.lostKeyRace()
        return 'continue'
      }

      const t0 = performance.now()
      const call = new ToolCall(tool, ticket, action.args, { runId: run.runId, actionId: action.id, idempotencyKey: key, attempt })
      run.track(call)
      if (run.cancelling) call.abort(run.signal.reason, effectful ? run.options.cancelGraceMs : 0)
      try {
        const result = await call.result
        run.track(undefined)
        const observation = result.observation ?? observe(result.output, run.options.observationChars)
        run.rec.record('tool/end', { tool: tool.name, attempt, output: result.output ?? null, observation, receipt: result.receipt, durationMs: Math.round(performance.now() - t0), reveals: validReveals(result.reveals) }, producer, run.idsOf(action.id, started.seq))
        if (effectful) {
          if (run.cancelling) run.noteEffect('committed', { actionId: action.id, tool: tool.name, receipt: result.receipt })
          await run.flush([{ op: 'outcome', key, status: 'committed', receipt: result.receipt, output: result.output ?? null, at: Date.now() }])
        }
        return 'continue'
      } catch (error) {
        run.track(undefined)
        const durationMs = Math.round(performance.now() - t0)
        const cancelled = run.cancelling && (error === run.signal.reason || CordageError.is(error, 'cancelled'))
        if (cancelled) {
          const observation = 'The run was cancelled while this tool ran.'
          run.rec.record('tool/error', { tool: tool.name, attempt, errorClass: 'cancelled', code: 'cancelled', message: 'cancelled while the tool ran', observation, durationMs }, producer, run.idsOf(action.id, started.seq))
          // The call did not finish within the grace: whether it took effect is unknown, and stays so in the ledger.
          if (effectful) run.noteEffect('unknown', { actionId: action.id, tool: tool.name, key })
          return 'continue'
        }
        const { code, kind, message } = classify(error, 'tool_failed')
        const safeToRetry = !effectful || tool.idempotent
        const willRetry = kind === 'tool_transient' && safeToRetry && attempt <= tool.retries
        // A side-effecting call that timed out, or whose connection broke, may have landed: its outcome
        // is unknown, not failed.
        const lost = code === 'tool_timeout' || code === 'tool_connection_lost'
        const unknown = !willRetry && effectful && lost
        const observation = code === 'tool_timeout' ? `${tool.name} did not finish within ${tool.timeoutMs} ms.` : `${tool.name} failed (${code}): ${message}`
        const stack = !CordageError.is(error) && error instanceof Error && error.stack ? error.stack.split('\n').slice(0, 6).join('\n') : undefined
        run.rec.record('tool/error', { tool: tool.name, attempt, errorClass: kind, code, message, observation, durationMs, willRetry: willRetry || undefined, unknown: unknown || undefined, stack }, producer, run.idsOf(action.id, started.seq))
        if (willRetry) continue
        if (unknown) {
          const settled = await this.settleUnknown(action, tool, key, code === 'tool_timeout' ? 'timeout' : 'connection_lost')
          return settled === 'retry' ? 'continue' : settled
        }
        if (code === 'tool_timeout') return run.end('FAILED', 'tool_timeout', `${tool.name} (action ${action.id}) did not finish within ${tool.timeoutMs} ms`)
        // The tool reported a failure: for a write, that means it did not take effect.
        if (effectful) await run.flush([{ op: 'outcome', key, status: 'failed', at: Date.now() }])
        if (kind !== 'tool_deterministic' && kind !== 'tool_transient' && kind !== 'model_semantic') return run.end('FAILED', code, message)
        return 'continue'
      }
    }
  }

  /**
   * An action whose call started and has no recorded outcome (the process died, or the call timed out).
   * Returns 'retry' when it is safe to run the call again with the same key.
   */
  async settleUnknown(action: ActionState, tool: Tool, key: string, why: 'timeout' | 'connection_lost' | 'resume'): Promise<Next | 'retry'> {
    const run = this.run
    if (why === 'resume' && (tool.sideEffect === 'none' || tool.idempotent)) return 'retry'
    if (tool.reconcile) {
      let found: Reconciled
      try {
        found = await tool.reconcile(key, run.signal)
      } catch {
        found = undefined
      }
      if (found) {
        const by = `${tool.owner ?? tool.name}:reconcile`
        run.rec.record('tool/reconciled', { tool: tool.name, key, committed: found.committed, by, ...(found.committed ? { receipt: found.receipt, output: found.output } : {}) }, KernelProducer, run.idsOf(action.id, run.state.lastSeq))
        await run.flush([found.committed
          ? { op: 'outcome', key, status: 'committed', receipt: found.receipt, output: found.output, at: Date.now() }
          : { op: 'outcome', key, status: 'not_committed', at: Date.now() }])
        if (found.committed || why === 'resume') return found.committed ? 'continue' : 'retry'
        return why === 'connection_lost'
          ? run.end('FAILED', 'tool_connection_lost', `${tool.name} (action ${action.id}) lost its connection, and did not take effect`)
          : run.end('FAILED', 'tool_timeout', `${tool.name} (action ${action.id}) did not finish within ${tool.timeoutMs} ms, and did not take effect`)
      }
    }
    const wasRunning = why === 'timeout' ? 'timed out' : why === 'connection_lost' ? 'lost its connection' : 'was running when its process stopped'
    return run.pause('WAITING_RECONCILIATION', `action ${action.id} (${tool.name}) ${wasRunning}; whether it took effect is unknown (idempotency key ${key}): settle it with cordage reconcile`, 'reconciliation', { actionId: action.id, code: 'unknown_effect' })
  }

  /**
   * Look the key up before a side effect. Returns what to do instead of calling the tool, 'takeover' to
   * call it under a key another run left pending, or undefined to go ahead.
   */
  private async checkLedger(action: ActionState, tool: Tool, key: string): Promise<Next | 'takeover' | undefined> {
    const run = this.run
    let effect = await run.store().effect(key)
    if (!effect || (effect.runId === run.runId && effect.actionId === action.id)) return undefined
    if (effect.argsHash !== action.argsHash) return conflict(run, action, key, effect)
    if (effect.status === 'pending') effect = await this.waitFor(key, effect)
    if (effect.status === 'committed') return deduplicate(run, action, tool, effect)
    if (effect.status === 'failed' || effect.status === 'not_committed') return undefined
    if (tool.idempotent) return 'takeover'
    return run.pause('WAITING_RECONCILIATION', `idempotency key ${key} of action ${action.id} (${tool.name}) belongs to ${effect.runId} ${effect.actionId}, whose effect is unknown: settle that one first`, 'reconciliation', { actionId: action.id, code: 'unknown_effect' })
  }

  /** Poll the ledger while another run's effect under `key` is pending, up to `effectWaitMs`. */
  private async waitFor(key: string, effect: Effect): Promise<Effect> {
    const until = Date.now() + this.run.options.effectWaitMs
    while (effect.status === 'pending' && Date.now() < until && !this.run.cancelling) {
      await new Promise((r) => setTimeout(r, 25))
      effect = (await this.run.store().effect(key)) ?? effect
    }
    return effect
  }
}

function conflict(run: DriverPort, action: ActionState, key: string, effect: Effect): Promise<Next> {
  return run.reject(action, 'idempotency_conflict', `Refused: idempotency key ${key} was already used by ${effect.runId} ${effect.actionId} with other arguments. Nothing was done.`)
}

/** The effect already happened under this key: close the action with its recorded result. */
async function deduplicate(run: DriverPort, action: ActionState, tool: Tool, effect: Effect): Promise<Next> {
  const observation = `${observe(effect.output ?? null, run.options.observationChars)} (already done under this idempotency key by ${effect.runId} ${effect.actionId}; not done again)`
  run.rec.record('tool/end', {
    tool: tool.name, attempt: action.attempts, output: effect.output ?? null, observation, receipt: effect.receipt, durationMs: 0,
    deduplicated: { runId: effect.runId, actionId: effect.actionId },
  }, tool.owner ?? KernelProducer, run.idsOf(action.id, action.decision?.seq))
  await run.flush()
  return 'continue'
}

export function observe(output: unknown, max: number): string {
  const text = typeof output === 'string' ? output : JSON.stringify(output) ?? 'null'
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters in the store)` : text
}

/** Tool names a result revealed, when it gave a list of names; anything else is ignored. */
function validReveals(reveals: unknown): string[] | undefined {
  if (!Array.isArray(reveals)) return undefined
  const names = reveals.filter((n): n is string => typeof n === 'string' && n.length > 0)
  return names.length ? names : undefined
}
