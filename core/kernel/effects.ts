/**
 * @module effects
 * Running one authorized action: the ticket, the side-effect ledger, the call under its time limit,
 * and what its outcome means. The rules (docs/concepts/durability.md has the table):
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
import { CordageError, type Code } from '../contracts/errors.ts'
import type { Recorder, EventIds } from './recorder.ts'
import type { Effect, EffectWrite, StoreService } from '../contracts/services/store.ts'
import type { Reconciled, Tool, ToolResult } from '../contracts/services/tools.ts'
import type { ActionState, RunState } from './state.ts'
import type { TerminalStatus, WaitingStatus } from './status.ts'
import { claimTicketIssuer, type Ticket } from './ticket.ts'
import { ToolCall } from './tool-call.ts'
import { targetOf } from './tool.ts'
import { KernelProducer } from './version.ts'
import type { Checkpoint, Next, PauseDetail } from './flow.ts'
import { ledgerArtifact, relist } from './artifacts.ts'
import { observe, recordFailed, recordSucceeded, type Consequence, type Outcome, type OutcomePort } from './call-outcome.ts'
import { timeLimitOf, unenforceable } from './constraints.ts'
import { guardsOf, screenToolValue } from './tool-texts.ts'
import { openReservation, reserveWave, settleCall, type MeterPort } from './meter.ts'
import type { Reservation } from '../contracts/data.ts'
export type { Checkpoint, Next, PauseDetail } from './flow.ts'

/** The kernel's right to issue tickets: claimed here, as this module loads, and never handed on. */
const issueTicket = claimTicketIssuer()

/** What running an action needs from the run's driver. */
export interface DriverPort extends OutcomePort {
  /** The step's meter, asked before a wave starts and when a reserved call ended (core/kernel/meter.ts). */
  readonly services: MeterPort['services']
  readonly runId: string
  readonly state: RunState
  readonly rec: Recorder
  readonly signal: AbortSignal
  readonly options: {
    ticketTtlMs: number
    observationChars: number
    cancelGraceMs: number
    effectWaitMs: number
    handoffs: readonly string[]
    interceptTool?: (tool: Tool) => Tool
  }
  readonly cancelling: boolean
  idsOf(actionId: string | undefined, causation?: number): EventIds
  store(): StoreService
  /** Flush buffered events (with these ledger writes) under the run's lease. */
  flush(effects?: EffectWrite[]): Promise<void>
  /** Calls in flight (`on` while running), so cancellation can reach them. */
  track(call: ToolCall, on: boolean): void
  /** Note a side effect that committed after cancellation was requested, or whose outcome is unknown. */
  noteEffect(kind: 'committed' | 'unknown', effect: { actionId: string; tool: string; receipt?: unknown; key?: string }): void
  reject(action: ActionState, code: Code, observation: string, causation?: number): Promise<Next>
  /** The run's lease token (fencing token), when the run is owned under a lease. */
  readonly fencingToken: number | undefined
  /**
   * Reject with `lease_lost` unless the lease is still this worker's (by its clock, or else asked of the
   * store): checked right before a side-effecting call starts.
   */
  checkLease(): Promise<void>
  pause(status: WaitingStatus, reason: string, checkpoint: Checkpoint, detail?: PauseDetail): Promise<Next>
  end(status: TerminalStatus, failureCode: Code | undefined, reason?: string): Promise<Next>
  /**
   * Another run took the idempotency key between the ledger look-up and the intent: write what was
   * recorded before the refused `tool/start` (the model's answer, the decision), then rebuild state from
   * the store, so the action is tried again from its decision and the model is not asked again.
   */
  lostKeyRace(starts: number): Promise<void>
}

/** An action policy (or a person) authorized under `policyVersion`; `causation` is the seq that authorized it. */
export interface Authorized {
  action: ActionState
  tool: Tool
  policyVersion: string
  causation: number
}

interface Ready extends Authorized {
  key: string
  takeover: boolean
}

interface Started {
  job: Ready
  attempt: number
  ticket: Ticket
  startedSeq: number
  intent: EffectWrite[]
  t0: number
  call?: ToolCall
  /** What the call reserved of the budgets (core/kernel/meter.ts), settled once its action ends. */
  reservation?: Reservation
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
    // The common case, one call, without the wave's bookkeeping (it costs microseconds a step).
    const unheld = this.unheldConstraints(action, tool)
    if (unheld) return unheld
    const key = this.keyOf(action, tool)
    let takeover = false
    if (tool.sideEffect !== 'none') {
      const verdict = await this.checkLedger(action, tool, key)
      if (verdict === 'takeover') takeover = true
      else if (verdict) return verdict
    }
    const job: Ready = { action, tool, policyVersion, causation, key, takeover }
    const refused = await reserveWave(this.run, [job])
    if (refused) return refused
    for (;;) {
      const started = this.start(job)
      try {
        // The model's decision, the policy decision and the intent are durable before the tool runs.
        await this.run.flush(started.intent)
      } catch (error) {
        if (!CordageError.is(error, 'effect_exists') && !CordageError.is(error, 'idempotency_conflict')) throw error
        await this.run.lostKeyRace(1)
        return 'continue'
      }
      // Frozen past the lease's expiry between the intent and the call, another worker may own the run now.
      if (tool.sideEffect !== 'none') await this.run.checkLease()
      let settled: PromiseSettledResult<ToolResult>
      try {
        settled = { status: 'fulfilled', value: await this.call(started) }
      } catch (reason) {
        settled = { status: 'rejected', reason }
      }
      const outcome = await this.finish(started, settled)
      if (outcome === 'done') return 'continue'
      if (outcome !== 'retry') return outcome.run()
    }
  }

  /**
   * Run authorized actions of one step side by side (core/kernel/parallel.ts chose them: their footprints do
   * not overlap). Everything that is recorded is recorded in proposal order, whatever finishes first:
   * every intent and `tool/start` is durable before any of the calls begins, and the outcomes are
   * recorded one by one in the order the model proposed the calls, so state and the model's context
   * do not depend on timing. What an outcome leads to (a retry, ending the run, waiting for a person)
   * is acted on only after every outcome of the wave is on record.
   */
  async executeTogether(jobs: Authorized[]): Promise<Next> {
    const run = this.run
    let queue: Ready[] = []
    for (const job of jobs) {
      const unheld = this.unheldConstraints(job.action, job.tool)
      if (unheld) {
        await unheld
        continue
      }
      const key = this.keyOf(job.action, job.tool)
      let takeover = false
      if (job.tool.sideEffect !== 'none') {
        const verdict = await this.checkLedger(job.action, job.tool, key)
        // Settled without running (refused, or already done); or the run now waits: what is left of the wave runs after.
        if (verdict === 'continue') continue
        if (verdict === 'halt') return 'halt'
        takeover = verdict === 'takeover'
      }
      queue.push({ ...job, key, takeover })
    }
    // Every call of the wave reserves at once, before any starts: all of them fit, or none starts.
    const refused = await reserveWave(this.run, queue)
    if (refused) return refused
    while (queue.length) {
      const started = queue.map((job) => this.start(job))
      try {
        // The model's decision, the policy decisions and the intents are durable before any tool runs.
        await run.flush(started.flatMap((s) => s.intent))
      } catch (error) {
        if (!CordageError.is(error, 'effect_exists') && !CordageError.is(error, 'idempotency_conflict')) throw error
        await run.lostKeyRace(started.length)
        return 'continue'
      }
      if (queue.some((job) => job.tool.sideEffect !== 'none')) await run.checkLease()
      const results = await Promise.allSettled(started.map((s) => this.call(s)))
      const outcomes: Outcome[] = []
      for (const [i, s] of started.entries()) outcomes.push(await this.finish(s, results[i]))
      // Every outcome is on record. A run-ending outcome wins: the run ends, and a neighbour whose effect
      // is unknown is listed as such in run/end. Otherwise unknown effects are settled in proposal order
      // (reconcile, or wait for a person), and retries go again as a wave.
      const ending = outcomes.find((o): o is Consequence => typeof o === 'object' && o.kind === 'end')
      if (ending) {
        // A neighbour that would have waited on a condition (a child run waiting for a person): the run
        // ends instead, so the condition is cancelled first, or a child's approval would outlive its parent.
        for (const o of outcomes) if (typeof o === 'object' && o.kind === 'wait') await o.cancelWait?.().catch(() => {})
        return ending.run()
      }
      const again: Ready[] = []
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome === 'retry') {
          again.push(queue[i])
          continue
        }
        if (outcome === 'done') continue
        const next = await outcome.run()
        if (next === 'halt') return 'halt'
      }
      queue = again
    }
    return 'continue'
  }

  /** Record `tool/start` for one call (not yet flushed) with its ledger intent, if it has side effects. */
  private start(job: Ready): Started {
    const run = this.run
    const { action, tool, policyVersion, causation, key } = job
    const attempt = action.attempts + 1
    const ticket = issueTicket(
      {
        runId: run.runId,
        actionId: action.id,
        tool: tool.name,
        argsHash: action.argsHash,
        policyVersion,
        ttlMs: run.options.ticketTtlMs,
        target: targetOf(tool),
      },
      undefined,
      action.args,
    )
    const started = run.rec.record(
      'tool/start',
      {
        tool: tool.name,
        attempt,
        ticket: ticket.id,
        idempotencyKey: key,
        argsHash: action.argsHash,
        policyVersion,
        timeoutMs: timeLimitOf(tool, action.decision?.constraints),
      },
      KernelProducer,
      run.idsOf(action.id, causation),
    )
    const intent: EffectWrite[] =
      tool.sideEffect !== 'none'
        ? [
            {
              op: 'intent',
              key,
              runId: run.runId,
              actionId: action.id,
              tool: tool.name,
              argsHash: action.argsHash,
              policyVersion,
              attempt,
              at: Date.now(),
              takeover: job.takeover || undefined,
            },
          ]
        : []
    const reservation = openReservation(run.state, 'tool', action.id)
    return { job, attempt, ticket, startedSeq: started.seq, intent, t0: 0, reservation }
  }

  /**
   * A constrained allow the tool cannot hold (core/kernel/constraints.ts): the call is refused before
   * any ticket, ledger intent or tool/start, with `constraint_unenforceable`. Undefined when it may run.
   */
  private unheldConstraints(action: ActionState, tool: Tool): Promise<Next> | undefined {
    const missing = unenforceable(action.decision?.constraints, tool)
    if (!missing.length) return undefined
    const declared = tool.enforces?.length ? tool.enforces.join(', ') : 'none'
    return this.run.reject(
      action,
      'constraint_unenforceable',
      `Policy allowed ${tool.name} only within constraints it cannot enforce (${missing.map((m) => `${m} ${JSON.stringify(action.decision!.constraints![m as 'maxAmount'])}`).join(', ')}; it enforces ${declared}). Nothing was run.`,
      action.decision?.seq,
    )
  }

  /** Run one started call under its time limit, reachable by cancellation while it runs. */
  private call(s: Started): Promise<ToolResult> {
    const run = this.run
    const { action, tool, key } = s.job
    s.t0 = performance.now()
    const invoked = run.options.interceptTool ? run.options.interceptTool(tool) : tool
    // The constraints as recorded with the decision (tool/decision), never as a policy might answer now.
    const constraints = action.decision?.constraints
    const call = new ToolCall(
      invoked,
      s.ticket,
      action.args,
      {
        runId: run.runId,
        actionId: action.id,
        idempotencyKey: key,
        attempt: s.attempt,
        fencingToken: run.fencingToken,
        ...(constraints ? { constraints } : {}),
      },
      timeLimitOf(tool, constraints),
    )
    s.call = call
    run.track(call, true)
    if (run.cancelling) call.abort(run.signal.reason, tool.sideEffect !== 'none' ? run.options.cancelGraceMs : 0)
    return call.result
  }

  /** Record what one call came to, and say what happens next: nothing, another attempt, or something the run must do. */
  private async finish(s: Started, settled: PromiseSettledResult<ToolResult>): Promise<Outcome> {
    const { action, tool, key } = s.job
    const call = { action, tool, key, attempt: s.attempt, startedSeq: s.startedSeq, durationMs: Math.round(performance.now() - s.t0) }
    if (s.call) this.run.track(s.call, false)
    const outcome =
      settled.status === 'fulfilled'
        ? await recordSucceeded(this.run, call, settled.value)
        : await recordFailed(this.run, call, settled.reason, (lost) => this.settleUnknown(action, tool, key, lost))
    // The action ended (not another attempt, not an effect still unknown): settle what it reserved.
    if (s.reservation && outcome !== 'retry' && !this.run.state.pending.includes(action.id)) {
      const usage = settled.status === 'fulfilled' ? settled.value?.usage : undefined
      const count = (n: unknown) => Number(n) || 0
      const u = { inputTokens: count(usage?.inputTokens), outputTokens: count(usage?.outputTokens), costUsd: count(usage?.costUsd) }
      // A meter that fails here ends the run at the next boundary: the outcomes of the wave are recorded first.
      const unsettled = await settleCall(this.run, s.reservation, u)
      if (unsettled) this.run.defer(unsettled)
    }
    return outcome
  }

  /**
   * An action whose call started and has no recorded outcome (the process died, or the call timed out).
   * Returns 'retry' when it is safe to run the call again with the same key.
   */
  async settleUnknown(
    action: ActionState,
    tool: Tool,
    key: string,
    why: 'timeout' | 'connection_lost' | 'resume',
  ): Promise<Next | 'retry'> {
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
        // What the target system reported is the tool's text like a result: recorded as the guardrail lets it through.
        const shown =
          found.committed && found.output !== undefined
            ? await screenToolValue(run, { action, tool, causation: run.state.lastSeq }, found.output, 'result')
            : undefined
        run.rec.record(
          'tool/reconciled',
          {
            tool: tool.name,
            key,
            committed: found.committed,
            by,
            ...(found.committed ? { receipt: found.receipt, output: shown?.value } : {}),
            ...(shown?.guard ? { redacted: { guard: shown.guard } } : {}),
          },
          KernelProducer,
          run.idsOf(action.id, run.state.lastSeq),
        )
        await run.flush([
          found.committed
            ? { op: 'outcome', key, status: 'committed', receipt: found.receipt, output: shown?.value, at: Date.now() }
            : { op: 'outcome', key, status: 'not_committed', at: Date.now() },
        ])
        if (found.committed || why === 'resume') return found.committed ? 'continue' : 'retry'
        return why === 'connection_lost'
          ? run.end('FAILED', 'tool_connection_lost', `${tool.name} (action ${action.id}) lost its connection, and did not take effect`)
          : run.end(
              'FAILED',
              'tool_timeout',
              `${tool.name} (action ${action.id}) did not finish within ${tool.timeoutMs} ms, and did not take effect`,
            )
      }
    }
    const wasRunning =
      why === 'timeout' ? 'timed out' : why === 'connection_lost' ? 'lost its connection' : 'was running when its process stopped'
    return run.pause(
      'WAITING_RECONCILIATION',
      `action ${action.id} (${tool.name}) ${wasRunning}; whether it took effect is unknown (idempotency key ${key}): settle it with cordage reconcile`,
      'reconciliation',
      { actionId: action.id, code: 'unknown_effect' },
    )
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
    return run.pause(
      'WAITING_RECONCILIATION',
      `idempotency key ${key} of action ${action.id} (${tool.name}) belongs to ${effect.runId} ${effect.actionId}, whose effect is unknown: settle that one first`,
      'reconciliation',
      { actionId: action.id, code: 'unknown_effect' },
    )
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

Object.freeze(EffectRunner.prototype)
function conflict(run: DriverPort, action: ActionState, key: string, effect: Effect): Promise<Next> {
  return run.reject(
    action,
    'idempotency_conflict',
    `Refused: idempotency key ${key} was already used by ${effect.runId} ${effect.actionId} with other arguments. Nothing was done.`,
  )
}

/** The effect already happened under this key: close the action with its recorded result. */
async function deduplicate(run: DriverPort, action: ActionState, tool: Tool, effect: Effect): Promise<Next> {
  const from = { action, tool, causation: action.decision?.seq ?? action.proposedSeq }
  // The ledger holds a large result's reference, not its bytes: this run gets the same reference,
  // listed under it too (content-addressed: no second blob), so read_artifact lets it read on.
  const artifact = ledgerArtifact(effect.output)
  if (artifact && effect.runId !== run.runId) await relist(run, action, artifact)
  // Recorded by another run, maybe under another guardrail: this run's guardrail sees it before it is recorded again.
  const shown = artifact ? undefined : await screenToolValue(run, from, effect.output ?? null, 'result')
  // The tool's own observation of the effect when the ledger kept it (a citation the verifier looks for
  // is in it), else the output rendered; then a line that says it was not done again.
  const own = typeof effect.observation === 'string' ? await run.screenOutput(action, tool, effect.observation, from.causation) : undefined
  const seen = own?.text ?? observe(shown?.guard ? shown.text : (effect.output ?? null), run.options.observationChars)
  const guard = guardsOf(shown?.guard, own?.guard)
  run.rec.record(
    'tool/end',
    {
      tool: tool.name,
      attempt: action.attempts,
      output: artifact ? undefined : shown!.value,
      observation: `${seen}\n(Already done under this idempotency key by ${effect.runId} ${effect.actionId}; not done again.)`,
      receipt: effect.receipt,
      durationMs: 0,
      artifact,
      deduplicated: { runId: effect.runId, actionId: effect.actionId },
      ...(guard ? { redacted: { guard } } : {}),
    },
    tool.owner ?? KernelProducer,
    run.idsOf(action.id, action.decision?.seq),
  )
  await run.flush()
  return 'continue'
}
