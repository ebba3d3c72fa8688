/**
 * @module otel-traces/attributes
 * The attribute names the spans carry. The gen_ai.* names are the OpenTelemetry GenAI semantic
 * conventions (status Development); OpenTelemetry advises copying incubating names rather than importing
 * them from `@opentelemetry/semantic-conventions/incubating`, whose exports may change in any minor
 * release. test/index.test.ts checks each copy against that package, so a renamed convention is noticed.
 * cordage.* are Cordage's own.
 */

export const GenAi = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const

/** Values of gen_ai.operation.name. */
export const Operation = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const

/** Stable: error.type. */
export const ErrorType = 'error.type'

export const Cordage = {
  runId: 'cordage.run.id',
  turnId: 'cordage.turn.id',
  stepId: 'cordage.step.id',
  stepIndex: 'cordage.step.index',
  actionId: 'cordage.action.id',
  runStatus: 'cordage.run.status',
  failureCode: 'cordage.failure.code',
  reason: 'cordage.reason',
  steps: 'cordage.run.steps',
  costUsd: 'cordage.usage.cost_usd',
  task: 'cordage.run.task',
  parentRunId: 'cordage.parent.run.id',
  parentActionId: 'cordage.parent.action.id',
  resumedFrom: 'cordage.resumed.from',
  resumedBy: 'cordage.resumed.by',
  /** True on a span opened for work that started in an earlier drive (a step that waited for approval). */
  continued: 'cordage.continued',
  /** Why a drive ended other than by its run's events: `plugin_disposed`. */
  driveEnd: 'cordage.drive.end',
  modelPlugin: 'cordage.model.plugin',
  attempt: 'cordage.attempt',
  decision: 'cordage.model.decision',
  retryInMs: 'cordage.retry_in_ms',
  policyVerdict: 'cordage.policy.verdict',
  policyRule: 'cordage.policy.rule',
  policyVersion: 'cordage.policy.version',
  approvedBy: 'cordage.approval.by',
  idempotencyKey: 'cordage.tool.idempotency_key',
  deduplicated: 'cordage.tool.deduplicated',
  willRetry: 'cordage.tool.will_retry',
  unknownEffect: 'cordage.tool.unknown_effect',
  /** True on what a dry run left: only the tool's preview ran, nothing was done. */
  dryRun: 'cordage.tool.dry_run',
  /** The guard that redacted or withheld what the tool produced (the run records what it let through). */
  redacted: 'cordage.tool.redacted',
} as const
