/**
 * @module contracts
 * The contract version of each kernel service, in one table. A plugin that provides a service names
 * the version it implements; a plugin (or the kernel) that requires one names a semver range.
 */
import { CompactorContract } from './services/compactor.ts'
import { AgentsContract } from './services/agents.ts'
import { ContextContract } from './services/context.ts'
import { GuardrailContract } from './services/guardrail.ts'
import { ModelContract } from './services/model.ts'
import { PolicyContract } from './services/policy.ts'
import { ProgressContract } from './services/progress.ts'
import { StoreContract } from './services/store.ts'
import { ToolsContract } from './services/tools.ts'
import { VerifierContract } from './services/verifier.ts'
import { WorkspaceContract } from './services/workspace.ts'
import { EmbeddingsContract } from './services/embeddings.ts'
import { MeterContract } from './services/meter.ts'
import { WaitsContract } from './services/waits.ts'

export const Contracts = {
  model: ModelContract,
  context: ContextContract,
  tools: ToolsContract,
  policy: PolicyContract,
  verifier: VerifierContract,
  compactor: CompactorContract,
  progress: ProgressContract,
  guardrail: GuardrailContract,
  store: StoreContract,
  workspace: WorkspaceContract,
  agents: AgentsContract,
  embeddings: EmbeddingsContract,
  meter: MeterContract,
  waits: WaitsContract,
} as const
Object.freeze(Contracts)

/** Services the host provides to every agent itself (no plugin does): a plugin may require them. */
export const HostProvided: Record<string, string> = { agents: AgentsContract, waits: WaitsContract }
Object.freeze(HostProvided)

/** What the loop itself requires of an agent: every service but the compactor, at a compatible major. */
export const KernelRequires: Record<string, string> = {
  model: '^1.0.0',
  context: '^1.0.0',
  tools: '^1.0.0',
  policy: '^1.0.0',
  verifier: '^1.0.0',
  store: '^2.2.0',
}
Object.freeze(KernelRequires)
export const KernelOptional: Record<string, string> = { compactor: '^1.0.0', progress: '^2.0.0', guardrail: '^1.0.0', meter: '^1.0.0' }
Object.freeze(KernelOptional)
