/**
 * @module effects
 * Running authorized actions, one wave executor for one call or several side by side, each call as
 * Pi's loop runs a tool call: prepare (the constraints it must hold,
 * core/kernel/constraints.ts; the idempotency ledger, core/kernel/ledger.ts; the ticket and `tool/start`
 * with its ledger intent), execute (the call under its time limit, reachable by cancellation) and
 * finalize (what its outcome means, core/kernel/call-outcome.ts; an effect whose outcome is not known,
 * core/kernel/unknown-effect.ts). Free functions over the run (core/kernel/run.ts). The rules
 * (docs/concepts/durability.md has the table):
 *
 * - A tool with side effects writes an intent to the ledger (idempotency key, arguments hash, policy
 *   version) in the same transaction as `tool/start`, and its outcome with `tool/end` / `tool/error`.
 * - Before that, the ledger is asked about the key (core/kernel/ledger.ts).
 * - A call whose outcome is not known is an unknown effect (core/kernel/unknown-effect.ts).
 * - Cancelled mid-call, a side-effecting call gets a short grace to finish: if it commits, the run says so.
 */
import { CordageError } from '../contracts/errors.ts'
import type { EffectWrite } from '../contracts/services/store.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { claimTicketIssuer, type Ticket } from './ticket.ts'
import { ToolCall, type Settled } from './tool-call.ts'
import { directInvoke, targetOf } from './tool.ts'
import { KernelProducer } from './version.ts'
import type { Next } from './flow.ts'
import { intercepted, veto } from './phases.ts'
import { recordFailed, recordSucceeded, type Consequence, type Outcome } from './call-outcome.ts'
import { endRun, pauseRun, stop } from './ending.ts'
import { cancelWait } from './waits.ts'
import { timeLimitOf, unheldConstraints } from './constraints.ts'
import { openReservation, reserveWave, settleCall } from './meter.ts'
import { checkLedger, keyOf } from './ledger.ts'
import { settleUnknown } from './unknown-effect.ts'
import type { Reservation } from '../contracts/data.ts'
import { closeRefused, refuse, type Refused } from './reject.ts'
import { recoverLostKeyRace } from './key-race.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'
export type { Next, PauseDetail } from './flow.ts'

/** The kernel's right to issue tickets: claimed here, as this module loads, and never handed on. */
const issueTicket = claimTicketIssuer()

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

/**
 * Run a wave: one authorized action, or several of one step side by side (core/kernel/parallel.ts chose
 * them: their footprints do not overlap). Each call goes prepare ({@link start}), execute ({@link call})
 * and finalize ({@link finish}). Everything that is recorded is recorded in proposal order, whatever
 * finishes first: every intent and `tool/start` is durable before any of the calls begins, and the
 * outcomes are recorded one by one in the order the model proposed the calls, so state and the model's
 * context do not depend on timing. What an outcome leads to (a retry, ending the run, waiting for a
 * person) is acted on only after every outcome of the wave is on record.
 */
export function* executeWave(run: Run, jobs: readonly Authorized[]): Flow<Next> {
  let queue: Ready[] = []
  for (let i = 0; i < jobs.length; i++) {
    const { action, tool, policyVersion, causation } = jobs[i]
    // Without a tool/before-execute handler, no wait: the phase costs one lookup.
    const refused =
      unheldConstraints(action, tool) ?? (intercepted(run, 'tool/before-execute') ? yield* wait(beforeExecute(run, jobs[i])) : undefined)
    if (refused) {
      closeRefused(run, action, refused)
      continue
    }
    const key = keyOf(run.runId, action, tool)
    const verdict = tool.sideEffect !== 'none' ? yield* wait(checkLedger(run, action, tool, key)) : undefined
    // Settled without running (refused, or already done); or the run now waits: what is left of the wave runs after.
    if (verdict === 'continue') continue
    if (typeof verdict === 'object') return yield* wait(stop(run, verdict))
    queue.push({ action, tool, policyVersion, causation, key, takeover: verdict === 'takeover' })
  }
  // Cancelled while the wave was checked (its ledger, its handlers): none of it starts; pass() ends the run.
  if (run.cancelRequest && queue.length) return 'continue'
  // Every call of the wave reserves at once, before any starts: all of them fit, or none starts.
  const refused = run.services.meter ? yield* wait(reserveWave(run, queue)) : undefined
  if (refused) return yield* wait(stop(run, refused))
  while (queue.length) {
    const started = queue.map((job) => start(run, job))
    const intent = started.flatMap((s) => s.intent)
    try {
      // The model's decision, the policy decisions and the intents are durable before any tool runs.
      yield run.flush(intent)
    } catch (error) {
      if (!CordageError.is(error, 'effect_exists') && !CordageError.is(error, 'idempotency_conflict')) throw error
      yield* wait(recoverLostKeyRace(run, started.length))
      return 'continue'
    }
    // Frozen past the lease's expiry between the intent and the call, another worker may own the run now.
    if (intent.length) yield run.checkLease()
    const results = yield* wait(callAll(run, started))
    const outcomes: Outcome[] = []
    for (let i = 0; i < started.length; i++) outcomes.push(yield* finish(run, started[i], results[i]))
    // Every outcome is on record. A run-ending outcome wins: the run ends, and a neighbour whose effect
    // is unknown is listed as such in run/end. Otherwise unknown effects are settled in proposal order
    // (reconcile, or wait for a person), and retries go again as a wave.
    const ending = outcomes.find((o) => typeof o === 'object' && o.kind === 'end')
    if (ending) {
      // A neighbour that would have waited on a condition (a child run waiting for a person): the run
      // ends instead, so the condition is cancelled first, or a child's approval would outlive its parent.
      for (const o of outcomes)
        if (typeof o === 'object' && o.kind === 'wait') yield* wait(cancelWait(run.agent.ctx, o.on, o.waiter).catch(() => {}))
      return yield* wait(endRun(run, 'FAILED', ending.code, ending.reason))
    }
    const again: Ready[] = []
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i]
      if (outcome === 'retry') again.push(queue[i])
      else if (outcome !== 'done' && (yield* wait(actOnConsequence(run, queue[i], outcome))) === 'halt') return 'halt'
    }
    queue = again
  }
  return 'continue'
}

/** What one outcome asks of the run: end it, wait on the condition, or settle an unknown effect. */
async function actOnConsequence(run: Run, { action, tool, key }: Ready, c: Consequence): Promise<Next> {
  if (c.kind === 'end') return endRun(run, 'FAILED', c.code, c.reason)
  if (c.kind === 'wait') return pauseRun(run, c.status, c.why, { actionId: action.id, on: c.on })
  const settled = await settleUnknown(run, action, tool, key, c.lost)
  return typeof settled === 'object' ? stop(run, settled) : 'continue'
}

/** An authorized call a `tool/before-execute` handler refuses is closed before anything of it starts. */
async function beforeExecute(run: Run, { action, tool, policyVersion, causation }: Authorized): Promise<Refused | undefined> {
  const extra = action.approval ? { policyVersion, approvedBy: action.approval.by } : { policyVersion }
  const vetoed = await veto(run, 'tool/before-execute', [action, tool.name, action.args, extra], 'before it ran')
  return vetoed && refuse(vetoed.code, vetoed.observation, causation)
}

/** Execute: the wave's calls side by side, settled as they answer; without a promise when every one answered at once. */
function callAll(run: Run, started: Started[]): Settled[] | Promise<Settled[]> {
  const results = started.map((s) => {
    try {
      return call(run, s)
    } catch (reason) {
      // A call that throws before it starts settles as rejected, its outcome recorded like any failure.
      return { status: 'rejected', reason } as const
    }
  })
  return results.some((r) => r instanceof Promise) ? Promise.all(results) : (results as Settled[])
}

/** Prepare: record `tool/start` for one call (not yet flushed) with its ledger intent, if it has side effects. */
function start(run: Run, job: Ready): Started {
  const { action, tool, policyVersion, causation, key } = job
  const attempt = action.attempts + 1
  const ticket = issueTicket(
    {
      runId: run.runId,
      actionId: action.id,
      tool: tool.name,
      argsHash: action.argsHash,
      policyVersion,
      ttlMs: run.agent.options.ticketTtlMs,
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

/** Execute: run one started call under its time limit, reachable by cancellation while it runs. */
function call(run: Run, s: Started): Settled | Promise<Settled> {
  const { action, tool, key } = s.job
  s.t0 = performance.now()
  const invoked = run.agent.options.interceptTool ? run.agent.options.interceptTool(tool) : tool
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
      fencingToken: run.rec.lease?.token,
      ...(constraints ? { constraints } : {}),
    },
    timeLimitOf(tool, constraints),
    directInvoke(invoked),
  )
  s.call = call
  // A call that settled at once is over: nothing in flight to reach.
  if (call.result instanceof Promise) run.track(call, true)
  if (run.cancelRequest) call.abort(run.signal.reason, tool.sideEffect !== 'none' ? run.agent.options.cancelGraceMs : 0)
  return call.result
}

/** Finalize: record what one call came to, and say what happens next: nothing, another attempt, or something the run must do. */
function* finish(run: Run, s: Started, settled: Settled): Flow<Outcome> {
  const { action, tool, key } = s.job
  const call = { action, tool, key, attempt: s.attempt, startedSeq: s.startedSeq, durationMs: Math.round(performance.now() - s.t0) }
  if (s.call) run.track(s.call, false)
  const outcome =
    settled.status === 'fulfilled' ? yield* recordSucceeded(run, call, settled.value) : yield* wait(recordFailed(run, call, settled.reason))
  // The action ended (not another attempt, not an effect still unknown): settle what it reserved.
  if (s.reservation && run.services.meter && outcome !== 'retry' && !run.state.pending.includes(action.id)) {
    const usage = settled.status === 'fulfilled' ? settled.value?.usage : undefined
    const count = (n: unknown) => Number(n) || 0
    const u = { inputTokens: count(usage?.inputTokens), outputTokens: count(usage?.outputTokens), costUsd: count(usage?.costUsd) }
    // A meter that fails here ends the run at the next boundary: the outcomes of the wave are recorded first.
    const unsettled = yield* wait(settleCall(run, s.reservation, u))
    if (unsettled) run.defer(unsettled)
  }
  return outcome
}
