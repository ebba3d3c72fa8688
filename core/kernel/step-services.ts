/**
 * @module step-services
 * The services a step uses, read from the agent's context when they changed: the five the loop needs
 * (model, context, tools, policy, verifier), the optional ones (compactor, progress, guardrail, meter) and the
 * store. A service set by a plugin whose manifest does not declare it is not used: the step says so and
 * the run waits (`service_missing`), as it does for a service nobody provides.
 */
import type { CompactorService } from '../contracts/services/compactor.ts'
import type { ContextService } from '../contracts/services/context.ts'
import type { GuardrailService } from '../contracts/services/guardrail.ts'
import type { MeterService } from '../contracts/services/meter.ts'
import type { ModelService } from '../contracts/services/model.ts'
import type { PolicyService } from '../contracts/services/policy.ts'
import type { ProgressService } from '../contracts/services/progress.ts'
import type { StoreService } from '../contracts/services/store.ts'
import type { ToolsService } from '../contracts/services/tools.ts'
import type { VerifierService } from '../contracts/services/verifier.ts'
import { type Context, readService, type ServiceEntry } from './cordis.ts'

export interface StepServices {
  model: ServiceEntry<ModelService>
  context: ServiceEntry<ContextService>
  tools: ServiceEntry<ToolsService>
  policy: ServiceEntry<PolicyService>
  verifier: ServiceEntry<VerifierService>
  compactor?: ServiceEntry<CompactorService>
  progress?: ServiceEntry<ProgressService>
  guardrail?: ServiceEntry<GuardrailService>
  meter?: ServiceEntry<MeterService>
}

const required: readonly string[] = ['model', 'context', 'tools', 'policy', 'verifier']

/** The step's services and the store, or why the step cannot have them. */
export function readStepServices(ctx: Context): { services: StepServices; store: ServiceEntry<StoreService> | undefined } | string {
  const found: Record<string, ServiceEntry | undefined> = {}
  for (const name of [...required, 'compactor', 'progress', 'guardrail', 'meter', 'store']) {
    const entry = readService(ctx, name)
    if (entry && !entry.declared)
      return `service "${name}" is set by ${entry.provider}, whose manifest does not declare that it provides it; the run does not use it`
    if (!entry && required.includes(name)) return `service "${name}" is not provided; resume the run once a plugin provides it`
    found[name] = entry
  }
  const { store, ...services } = found
  return { services: services as unknown as StepServices, store: store as ServiceEntry<StoreService> | undefined }
}
