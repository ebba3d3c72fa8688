/**
 * @module cordage
 * The public API for plugins and embedding code: the contracts (events, services, errors, manifest),
 * what the kernel lets plugins use (defineTool, redeemTicket, statuses, budgets, agent contexts), and
 * the kit (`cordage/kit`). Re-exports only; nothing is defined here. The host is `cordage/host`.
 */
export * from './contracts/errors.ts'
export * from './kernel/status.ts'
export * from './contracts/events.ts'
export * from './kernel/budget.ts'
export { checkResumeBudgets, startBudgets } from './kit/budgets.ts'
// The thread's bound the kernel holds at every boundary: a meter reserves within the same figures.
export { overThreadBudget } from './kernel/thread-budget.ts'
// The plugin author's kit (also `cordage/kit`): helpers that depend on the contracts only.
export * from './kit/index.ts'
// Issuing tickets is the kernel's alone (core/kernel/ticket.ts): only the types and the check a tool makes are public.
export { redeemTicket, type Ticket, type Grant, type CallBinding } from './kernel/ticket.ts'
export * from './kernel/tool.ts'
export * from './kernel/parallel.ts'
export { checkPreview, checkPreviewOutcome, renderPreview, PreviewLimits } from './contracts/checks/preview.ts'
export type { Preview, PreviewOutcome, SliceUpdate } from './contracts/data.ts'
export * from './kernel/state.ts'
export * from './contracts/manifest.ts'
// The phases a plugin handles with ctx.on (its `ProposedCall` is the phases' own, not the model's).
export {
  Phases,
  type AskedCall,
  type AuthorizedCall,
  type FinalAnswer,
  type ModelContext,
  type PhaseHandler,
  type PhaseInfo,
  type PhaseMode,
  type PhaseName,
  type PhaseValue,
  type PreviewCall,
  type Refusal,
  type ResultShape,
  type ShapedResult,
  type ShownTools,
} from './contracts/phases.ts'
// What a run/before-start handler gets and may hand back (core/contracts/phases.ts): plugins/threads uses it.
export { MaxHistoryBytes, StartRefusalCodes, type RunDraft, type ThreadClaim } from './contracts/phases.ts'
export { handover, swapState, type Handover, type SwapState } from './kit/swap-state.ts'
export * from './contracts/versions.ts'
// The runtime's class is the host's to build (it hands it the store writer): plugins get its type only.
export { newRunId, type AgentRuntime } from './kernel/agent.ts'
export { DefaultServiceTimeouts, type AgentOptions, type StartOptions } from './kernel/agent-options.ts'
export { TimedServices, type ResolvedAgentOptions, type TimedService } from './kernel/loop-host.ts'
export type { RunHandle, Actor, ContinueOptions, ApprovalOptions } from './contracts/commands.ts'
export type { DriftPolicy, DriftChange } from './contracts/drift.ts'
export * from './kernel/version.ts'
export { AgentKey, ServiceNames, createAgentContext, readService, pluginOf, type ServiceName } from './kernel/cordis.ts'
export * from './contracts/services/model.ts'
export * from './contracts/services/context.ts'
export * from './contracts/services/tools.ts'
export * from './contracts/services/policy.ts'
export * from './contracts/services/progress.ts'
export * from './contracts/services/guardrail.ts'
export * from './contracts/services/agents.ts'
export * from './contracts/services/waits.ts'
export * from './contracts/services/compactor.ts'
export * from './contracts/services/store.ts'
export { assertKernelWriter } from './kernel/store-writer.ts'
export * from './contracts/services/verifier.ts'
export * from './contracts/services/workspace.ts'
export * from './contracts/services/embeddings.ts'
export * from './contracts/services/meter.ts'
export { checkMeterAnswer, checkMeterBound, checkSettlement } from './contracts/checks/meter.ts'
