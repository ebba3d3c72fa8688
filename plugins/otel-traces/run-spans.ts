/**
 * @module otel-traces/run-spans
 * Turns a run's events into spans, as they are dispatched. One `invoke_agent {agent}` span per drive
 * (from run/start or a resume to run/end or a pause), under it a span per turn and per step, and under a
 * step its `chat {model}` calls (one per attempt), `execute_tool {tool}` executions (one per attempt)
 * and its verification. Times are the events' own, so a listener that hears an event late does not
 * stretch a span. Nothing here may throw into the loop or wait: the caller catches, and exporting
 * happens elsewhere.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api'
import type { RunEvent } from 'cordage'
import { Cordage as C, ErrorType, GenAi, Operation } from './attributes.ts'
import { traceIdOf, type RunIds } from './ids.ts'

interface Scope {
  id: string
  span: Span
  ctx: Context
}

/** What the events before a tool's start said about the call. */
interface Call {
  tool: string
  callId?: string
  verdict?: string
  rule?: string
  policyVersion?: string
  approvedBy?: string
}

interface RunTrace {
  agent: string
  drive?: Scope
  turn?: Scope
  step?: Scope
  chat?: Span
  verify?: Span
  tools: Map<string, Span>
  calls: Map<string, Call>
  /** The model plugin (name@version) that answered last, for gen_ai.provider.name. */
  modelPlugin?: string
  /** The last drive that ended, linked from the next one. */
  previous?: SpanContext
  /** When each action's approval was asked for, to tell the wait on the decision. */
  asked: Map<string, number>
}

export interface RunTracerOptions {
  /** The agent this plugin serves: names a drive that starts without run/start (a resume). */
  agent: string
  /** gen_ai.provider.name; derived from the model plugin when absent. */
  providerName?: string
  /** Called when a drive's spans are all ended (run end, pause, handoff). Must not throw or wait. */
  drained: () => void
}

/** Runs remembered after their drive ended, for the link from a later drive in this process. */
const MaxRemembered = 1000

export class RunTracer {
  readonly #runs = new Map<string, RunTrace>()

  constructor(
    private readonly tracer: Tracer,
    private readonly ids: RunIds,
    private readonly options: RunTracerOptions,
  ) {}

  /** Open spans right now, for tests and the dispose check. */
  get openRuns(): number {
    return [...this.#runs.values()].filter((r) => r.drive).length
  }

  /**
   * End every open drive (the plugin is going away: the app stops, or a swap replaces it), so what was
   * recorded is exported rather than lost. An approval recorded without resuming (`resume: false`) opens
   * a drive that no later event of this process ends.
   */
  closeAll(at: number): void {
    for (const run of this.#runs.values()) {
      if (!run.drive) continue
      run.drive.span.setAttribute(C.driveEnd, 'plugin_disposed')
      this.#closeDrive(run, at, { code: SpanStatusCode.UNSET })
    }
  }

  handle(event: RunEvent): void {
    const run = this.#run(event)
    if (event.type === 'run/start') {
      run.agent = event.data.agent
      run.modelPlugin = event.data.services.model
      this.#openDrive(run, event, {
        ...(event.data.parent ? { [C.parentRunId]: event.data.parent.runId, [C.parentActionId]: event.data.parent.actionId } : {}),
      })
      return
    }
    if (event.type === 'run/end') {
      this.#end(run, event)
      return
    }
    if (event.type === 'run/paused') {
      this.#pause(run, event)
      return
    }
    if (!run.drive) this.#openDrive(run, event, { [C.continued]: true })
    this.#scopes(run, event)
    const at = event.time
    switch (event.type) {
      case 'run/resumed':
        run.drive!.span.setAttributes({ [C.resumedFrom]: event.data.from, [C.resumedBy]: event.data.by })
        this.#note(run, 'cordage.run.resumed', at, { [C.resumedFrom]: event.data.from, [C.resumedBy]: event.data.by })
        return
      case 'run/checkpoint':
        this.#note(run, 'cordage.run.checkpoint', at, { 'cordage.checkpoint.reason': event.data.reason })
        return
      case 'run/cancel-requested':
        this.#note(run, 'cordage.run.cancel_requested', at, { 'cordage.cancel.by': event.data.by })
        return
      case 'run/recovered':
        this.#note(run, 'cordage.run.recovered', at, { 'cordage.recovered.worker': event.data.worker })
        return
      case 'run/version-drift':
        this.#note(run, 'cordage.run.version_drift', at, { 'cordage.drift.decision': event.data.decision })
        return
      case 'run/handoff':
        run.drive!.span.setAttributes({ 'cordage.handoff.to': event.data.to })
        // The next agent drives from here: its own copy of this plugin opens the next drive.
        if (event.data.to !== run.agent) this.#closeDrive(run, at, { code: SpanStatusCode.UNSET })
        return
      case 'turn/end':
        this.#endScope(run, 'turn', at)
        return
      case 'step/context':
        run.step?.span.setAttributes({ 'cordage.context.messages': event.data.messages, 'cordage.context.tokens': event.data.tokens })
        return
      case 'step/model-request':
        this.#startChat(run, event)
        return
      case 'step/model-response':
        this.#endChat(run, event)
        return
      case 'step/model-error':
        this.#failChat(run, event)
        return
      case 'step/end':
        this.#endScope(run, 'step', at)
        return
      case 'step/no-progress':
        this.#note(run, 'cordage.step.no_progress', at, { 'cordage.no_progress.response': event.data.response })
        return
      case 'compaction/start':
        this.#note(run, 'cordage.compaction.start', at, { 'cordage.compaction.tokens': event.data.tokens })
        return
      case 'compaction/end':
        this.#note(run, 'cordage.compaction.end', at, { 'cordage.compaction.after': event.data.after })
        return
      case 'tool/proposed':
        run.calls.set(event.actionId!, { tool: event.data.tool, callId: event.data.callId })
        return
      case 'tool/decision':
        this.#decided(run, event)
        return
      case 'tool/approval-requested':
        run.asked.set(event.actionId!, at)
        this.#note(run, 'cordage.approval.requested', at, {
          [C.actionId]: event.actionId!,
          [GenAi.toolName]: event.data.tool,
          [C.policyRule]: event.data.ruleId,
        })
        return
      case 'tool/approval-decided':
        this.#approval(run, event)
        return
      case 'tool/start':
        this.#startTool(run, event)
        return
      case 'tool/end':
        this.#endTool(run, event)
        return
      case 'tool/error':
        this.#failTool(run, event)
        return
      case 'tool/reconciled':
        this.#note(run, 'cordage.tool.reconciled', at, {
          [C.actionId]: event.actionId!,
          'cordage.reconciled.committed': event.data.committed,
        })
        return
      case 'guard/tripped':
        this.#note(run, 'cordage.guard.tripped', at, {
          'cordage.guard.stage': event.data.stage,
          'cordage.guard.action': event.data.action,
        })
        return
      case 'verify/start':
        run.verify = this.tracer.startSpan(
          'cordage.verify',
          { startTime: at, attributes: this.#ids(event) },
          run.step?.ctx ?? run.drive!.ctx,
        )
        return
      case 'verify/end':
        this.#endVerify(run, event)
        return
      default:
        return // turn/start, step/start: their spans were opened by #scopes
    }
  }

  #run(event: RunEvent): RunTrace {
    let run = this.#runs.get(event.runId)
    if (!run) {
      run = { agent: this.options.agent, tools: new Map(), calls: new Map(), asked: new Map() }
      this.#runs.set(event.runId, run)
      if (this.#runs.size > MaxRemembered) this.#forgetOne()
    }
    return run
  }

  #forgetOne(): void {
    for (const [id, run] of this.#runs) {
      if (!run.drive) {
        this.#runs.delete(id)
        return
      }
    }
  }

  #openDrive(run: RunTrace, event: RunEvent, extra: Attributes): void {
    const attributes: Attributes = {
      [GenAi.operationName]: Operation.invokeAgent,
      [GenAi.agentName]: run.agent,
      [GenAi.agentId]: run.agent,
      [GenAi.conversationId]: event.runId,
      [C.runId]: event.runId,
      ...extra,
    }
    const provider = this.#provider(run)
    if (provider) attributes[GenAi.providerName] = provider
    const span = this.ids.withTrace(traceIdOf(event.runId), () =>
      this.tracer.startSpan(
        `${Operation.invokeAgent} ${run.agent}`,
        { kind: SpanKind.INTERNAL, startTime: event.time, attributes, links: run.previous ? [{ context: run.previous }] : [], root: true },
        ROOT_CONTEXT,
      ),
    )
    run.drive = { id: event.runId, span, ctx: trace.setSpan(ROOT_CONTEXT, span) }
  }

  /** Open the turn and step an event belongs to, when they are not open (a drive that resumed mid-step). */
  #scopes(run: RunTrace, event: RunEvent): void {
    const type = event.type
    if (type.startsWith('run/')) return
    if (event.turnId && type !== 'turn/end' && run.turn?.id !== event.turnId) {
      this.#endScope(run, 'turn', event.time)
      const span = this.tracer.startSpan(
        'cordage.turn',
        {
          startTime: event.time,
          attributes: { [C.runId]: event.runId, [C.turnId]: event.turnId, ...(type === 'turn/start' ? {} : { [C.continued]: true }) },
        },
        run.drive!.ctx,
      )
      run.turn = { id: event.turnId, span, ctx: trace.setSpan(run.drive!.ctx, span) }
    }
    if (event.stepId && !type.startsWith('turn/') && type !== 'step/end' && run.step?.id !== event.stepId) {
      this.#endScope(run, 'step', event.time)
      const parent = run.turn?.ctx ?? run.drive!.ctx
      const attributes: Attributes = this.#ids(event)
      if (type === 'step/start') attributes[C.stepIndex] = (event as RunEvent<'step/start'>).data.index
      else attributes[C.continued] = true
      const span = this.tracer.startSpan('cordage.step', { startTime: event.time, attributes }, parent)
      run.step = { id: event.stepId, span, ctx: trace.setSpan(parent, span) }
    }
  }

  #endScope(run: RunTrace, which: 'turn' | 'step', at: number): void {
    if (which === 'turn') this.#endScope(run, 'step', at)
    else {
      run.chat?.end(at)
      run.verify?.end(at)
      for (const span of run.tools.values()) span.end(at)
      run.chat = run.verify = undefined
      run.tools.clear()
    }
    run[which]?.span.end(at)
    run[which] = undefined
  }

  #closeDrive(run: RunTrace, at: number, status: { code: SpanStatusCode; message?: string }): void {
    this.#endScope(run, 'turn', at)
    const drive = run.drive
    if (!drive) return
    if (status.code !== SpanStatusCode.UNSET) drive.span.setStatus(status)
    drive.span.end(at)
    run.previous = drive.span.spanContext()
    run.drive = undefined
    this.options.drained()
  }

  #pause(run: RunTrace, event: RunEvent<'run/paused'>): void {
    if (!run.drive) this.#openDrive(run, event, { [C.continued]: true })
    run.drive!.span.setAttributes({
      [C.runStatus]: event.data.status,
      [C.reason]: event.data.reason,
      ...(event.data.code ? { [C.failureCode]: event.data.code } : {}),
    })
    this.#note(run, 'cordage.run.paused', event.time, {
      [C.runStatus]: event.data.status,
      ...(event.data.actionId ? { [C.actionId]: event.data.actionId } : {}),
    })
    // Waiting is not failing: the drive ends without an error, and the run goes on in a later drive.
    this.#closeDrive(run, event.time, { code: SpanStatusCode.UNSET })
  }

  #end(run: RunTrace, event: RunEvent<'run/end'>): void {
    if (!run.drive) this.#openDrive(run, event, { [C.continued]: true })
    const { status, failureCode, reason, usage, steps } = event.data
    run.drive!.span.setAttributes({
      [C.runStatus]: status,
      [C.steps]: steps,
      [GenAi.inputTokens]: usage.inputTokens,
      [GenAi.outputTokens]: usage.outputTokens,
      [C.costUsd]: usage.costUsd,
      ...(failureCode ? { [C.failureCode]: failureCode } : {}),
      ...(reason ? { [C.reason]: reason } : {}),
    })
    const failed = status !== 'COMPLETED'
    if (failed) run.drive!.span.setAttribute(ErrorType, failureCode ?? status.toLowerCase())
    this.#closeDrive(
      run,
      event.time,
      failed ? { code: SpanStatusCode.ERROR, message: reason ?? failureCode ?? status } : { code: SpanStatusCode.UNSET },
    )
    this.#runs.delete(event.runId)
  }

  #startChat(run: RunTrace, event: RunEvent<'step/model-request'>): void {
    run.chat?.end(event.time)
    run.modelPlugin = event.data.model
    const attributes: Attributes = {
      ...this.#ids(event),
      [GenAi.operationName]: Operation.chat,
      [C.modelPlugin]: event.data.model,
      [C.attempt]: event.data.attempt,
    }
    const provider = this.#provider(run)
    if (provider) attributes[GenAi.providerName] = provider
    // The model's name is known once it answered (the contract reports the model the adapter used):
    // until then the span is named after the operation alone, as the conventions say for that case.
    run.chat = this.tracer.startSpan(
      Operation.chat,
      { kind: SpanKind.CLIENT, startTime: event.time, attributes },
      run.step?.ctx ?? run.drive!.ctx,
    )
  }

  #endChat(run: RunTrace, event: RunEvent<'step/model-response'>): void {
    const span = run.chat
    if (!span) return
    const { usage, model, decision } = event.data
    if (model) {
      span.updateName(`${Operation.chat} ${model}`)
      span.setAttributes({ [GenAi.requestModel]: model, [GenAi.responseModel]: model })
    }
    span.setAttributes({
      [GenAi.inputTokens]: usage.inputTokens,
      [GenAi.outputTokens]: usage.outputTokens,
      [C.costUsd]: usage.costUsd,
      [C.decision]: decision.kind,
    })
    span.end(event.time)
    run.chat = undefined
  }

  #failChat(run: RunTrace, event: RunEvent<'step/model-error'>): void {
    const span = run.chat
    if (!span) return
    span.setAttributes({
      [ErrorType]: event.data.code,
      ...(event.data.retryInMs !== undefined ? { [C.retryInMs]: event.data.retryInMs } : {}),
    })
    span.setStatus({ code: SpanStatusCode.ERROR, message: event.data.message })
    span.end(event.time)
    run.chat = undefined
  }

  #decided(run: RunTrace, event: RunEvent<'tool/decision'>): void {
    const call = run.calls.get(event.actionId!)
    if (call) Object.assign(call, { verdict: event.data.verdict, rule: event.data.ruleId, policyVersion: event.data.policyVersion })
    if (event.data.verdict === 'deny')
      this.#note(run, 'cordage.tool.denied', event.time, {
        [C.actionId]: event.actionId!,
        [C.policyRule]: event.data.ruleId,
        ...(call ? { [GenAi.toolName]: call.tool } : {}),
      })
  }

  #approval(run: RunTrace, event: RunEvent<'tool/approval-decided'>): void {
    // In another process than the one that asked, this is the first the plugin hears of the call.
    const call = run.calls.get(event.actionId!) ?? { tool: '' }
    run.calls.set(event.actionId!, call)
    if (event.data.approved) call.approvedBy = event.data.by
    const asked = run.asked.get(event.actionId!)
    run.asked.delete(event.actionId!)
    this.#note(run, 'cordage.approval.decided', event.time, {
      [C.actionId]: event.actionId!,
      'cordage.approval.approved': event.data.approved,
      [C.approvedBy]: event.data.by,
      ...(event.data.scope ? { 'cordage.approval.scope': event.data.scope } : {}),
      ...(asked !== undefined ? { 'cordage.approval.wait_ms': event.time - asked } : {}),
    })
  }

  #startTool(run: RunTrace, event: RunEvent<'tool/start'>): void {
    const actionId = event.actionId!
    run.tools.get(actionId)?.end(event.time)
    const call = run.calls.get(actionId)
    const attributes: Attributes = {
      ...this.#ids(event),
      [GenAi.operationName]: Operation.executeTool,
      [GenAi.toolName]: event.data.tool,
      [GenAi.toolType]: 'function',
      [C.attempt]: event.data.attempt,
      [C.idempotencyKey]: event.data.idempotencyKey,
      [C.policyVersion]: event.data.policyVersion,
    }
    if (call?.callId) attributes[GenAi.toolCallId] = call.callId
    if (call?.verdict) attributes[C.policyVerdict] = call.verdict
    if (call?.rule) attributes[C.policyRule] = call.rule
    if (call?.approvedBy) attributes[C.approvedBy] = call.approvedBy
    const span = this.tracer.startSpan(
      `${Operation.executeTool} ${event.data.tool}`,
      { kind: SpanKind.INTERNAL, startTime: event.time, attributes },
      run.step?.ctx ?? run.drive!.ctx,
    )
    run.tools.set(actionId, span)
  }

  #endTool(run: RunTrace, event: RunEvent<'tool/end'>): void {
    const span = run.tools.get(event.actionId!)
    if (!span) {
      // A dry run: the tool's preview ran instead of the tool, so there is no execution to time. An
      // event says so, never an execute_tool span, which would read as a write.
      if (event.data.dryRun)
        this.#note(run, 'cordage.tool.dry_run', event.time, {
          [C.actionId]: event.actionId!,
          [GenAi.toolName]: event.data.tool,
          [C.dryRun]: true,
          ...(event.data.redacted ? { [C.redacted]: event.data.redacted.guard } : {}),
        })
      return
    }
    if (event.data.deduplicated) span.setAttribute(C.deduplicated, true)
    if (event.data.redacted) span.setAttribute(C.redacted, event.data.redacted.guard)
    if (event.data.usage)
      span.setAttributes({ [GenAi.inputTokens]: event.data.usage.inputTokens, [GenAi.outputTokens]: event.data.usage.outputTokens })
    span.end(event.time)
    run.tools.delete(event.actionId!)
  }

  #failTool(run: RunTrace, event: RunEvent<'tool/error'>): void {
    const span = run.tools.get(event.actionId!)
    if (!span) {
      // The call never started (unknown tool, invalid arguments, denied, rejected): no execution to time.
      this.#note(run, 'cordage.tool.not_run', event.time, {
        [C.actionId]: event.actionId!,
        [GenAi.toolName]: event.data.tool,
        [ErrorType]: event.data.code,
        ...(event.data.dryRun ? { [C.dryRun]: true } : {}),
        ...(event.data.redacted ? { [C.redacted]: event.data.redacted.guard } : {}),
      })
      return
    }
    span.setAttributes({
      [ErrorType]: event.data.code,
      'cordage.error.class': event.data.errorClass,
      ...(event.data.willRetry ? { [C.willRetry]: true } : {}),
      ...(event.data.unknown ? { [C.unknownEffect]: true } : {}),
      ...(event.data.redacted ? { [C.redacted]: event.data.redacted.guard } : {}),
    })
    span.setStatus({ code: SpanStatusCode.ERROR, message: event.data.message })
    span.end(event.time)
    run.tools.delete(event.actionId!)
  }

  #endVerify(run: RunTrace, event: RunEvent<'verify/end'>): void {
    const span = run.verify
    if (!span) return
    span.setAttributes({ 'cordage.verify.ok': event.data.ok, 'cordage.verify.evidence': event.data.evidence.length })
    if (!event.data.ok) {
      span.setAttribute(ErrorType, event.data.code ?? 'verification_failed')
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.data.reason ?? event.data.code ?? 'verification failed' })
    }
    span.end(event.time)
    run.verify = undefined
  }

  /** A span event on the innermost open span of the run. */
  #note(run: RunTrace, name: string, at: number, attributes: Attributes): void {
    const span = run.step?.span ?? run.turn?.span ?? run.drive?.span
    span?.addEvent(name, attributes, at)
  }

  #ids(event: RunEvent): Attributes {
    const ids: Attributes = { [C.runId]: event.runId }
    if (event.turnId) ids[C.turnId] = event.turnId
    if (event.stepId) ids[C.stepId] = event.stepId
    if (event.actionId) ids[C.actionId] = event.actionId
    return ids
  }

  #provider(run: RunTrace): string | undefined {
    return this.options.providerName ?? providerOf(run.modelPlugin)
  }
}

/** gen_ai.provider.name from a model plugin label: `model-openai@1.0.0` → `openai`. */
export function providerOf(plugin: string | undefined): string | undefined {
  if (!plugin) return undefined
  const name = plugin.replace(/@[^@]*$/, '')
  return name.startsWith('model-') && name.length > 'model-'.length ? name.slice('model-'.length) : name
}
