/**
 * @module cordage
 * The public API: the kernel (loop, events, contracts, errors) and the host (presets, plugin loading).
 * Re-exports only; nothing is defined here.
 */
export * from './errors.ts'
export * from './status.ts'
export * from './events.ts'
export * from './budget.ts'
export * from './hash.ts'
export * from './glob.ts'
export * from './ticket.ts'
export * from './tool.ts'
export * from './process.ts'
export * from './state.ts'
export * from './summary.ts'
export * from './manifest.ts'
export * from './contracts.ts'
export * from './agent.ts'
export * from './version.ts'
export { AgentKey, ServiceNames, createAgentContext, readService, pluginOf, type ServiceName } from './cordis.ts'
export * from './services/model.ts'
export * from './services/context.ts'
export * from './services/tools.ts'
export * from './services/policy.ts'
export * from './services/compactor.ts'
export * from './services/store.ts'
export * from './services/verifier.ts'
export * from './services/workspace.ts'
