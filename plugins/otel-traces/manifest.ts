import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  /** The OTLP/HTTP traces endpoint, in full (`…/v1/traces`). */
  endpoint: string
  /** Headers sent with every export whose values may appear in a preset. */
  headers: Record<string, string>
  /** Headers whose values are secret: header name → the environment variable that holds the value. */
  headersEnv: Record<string, string>
  /** `service.name` of the resource. */
  serviceName: string
  /** More resource attributes. */
  resource: Record<string, string | number | boolean>
  /** `batch` queues spans and sends them in batches (and at every run end or pause); `simple` sends each span as it ends. */
  processor: 'batch' | 'simple'
  /** How long one export may take before it is abandoned (and logged). */
  timeoutMs: number
  /** `gen_ai.provider.name`; by default derived from the model plugin (model-openai → openai). */
  providerName?: string
}

/** The longest `timeoutMs`: an export still unanswered after a minute is not coming back. */
export const MaxTimeoutMs = 60_000

export default {
  name: 'otel-traces',
  version: '1.0.0',
  description:
    'Exports runs as OpenTelemetry traces over OTLP/HTTP, following the GenAI semantic conventions: invoke_agent, chat and execute_tool spans with token usage, errors and the run, turn and step ids.',
  // Each value of headersEnv names a variable holding a secret: every run scrubs its value from what it records.
  secrets: ['headersEnv'],
  config: Schema.object({
    endpoint: Schema.string()
      .default('http://localhost:4318/v1/traces')
      .description('The OTLP/HTTP traces endpoint, in full: a collector listens on port 4318 at /v1/traces.'),
    headers: Schema.dict(Schema.string())
      .default({})
      .description('Headers sent with every export, for values that may be read in the preset (a tenant name).'),
    headersEnv: Schema.dict(Schema.string())
      .default({})
      .description(
        'Secret headers: header name → the environment variable that holds its value (authorization: OTEL_TOKEN). The value never goes in a preset.',
      ),
    serviceName: Schema.string().default('cordage').description('The resource attribute service.name.'),
    resource: Schema.dict(Schema.union([Schema.string(), Schema.number(), Schema.boolean()]))
      .default({})
      .description('More resource attributes (deployment.environment.name: staging).'),
    processor: Schema.union(['batch', 'simple'])
      .default('batch')
      .description('batch: send spans in batches, and at once whenever a run ends or pauses; simple: send each span as it ends.'),
    timeoutMs: Schema.natural()
      .min(1)
      .max(MaxTimeoutMs)
      .default(10_000)
      .description(
        'Abandon an export that takes longer than this, at most 60000 (the failure is logged; runs never wait for an export, and a process exiting waits at most 2 s).',
      ),
    providerName: Schema.string().description(
      'gen_ai.provider.name of model calls; by default from the model plugin: model-openai → openai, model-anthropic → anthropic, model-NAME → NAME.',
    ),
  }),
} satisfies Manifest
