import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import { AgentKey, definePlugin, RunEventTypes, type CordagePlugin, type RunEvent } from 'cordage'
import { ExitWaitMs, startTracing } from './export.ts'
import manifest, { type Config } from './manifest.ts'
import { RunTracer } from './run-spans.ts'
import { exportHeaders } from './settings.ts'

export { traceIdOf } from './ids.ts'
export { providerOf, RunTracer } from './run-spans.ts'

/** What code (never a preset) may give the plugin. */
export interface OtelTracesOptions {
  /** Send spans here instead of OTLP/HTTP to `endpoint` (an in-memory exporter in tests, an application's own). */
  exporter?: SpanExporter
  /** Where headersEnv is read. Default: process.env. */
  env?: NodeJS.ProcessEnv
}

/**
 * The plugin, with options only code can give: a preset gets the default export.
 * @example
 * const exporter = new InMemorySpanExporter()
 * const plugin = createOtelTraces({ exporter })
 */
export function createOtelTraces(options: OtelTracesOptions = {}): CordagePlugin<Config> {
  return definePlugin<Config>(manifest, (ctx, config) => {
    const headers = exportHeaders(config, options.env ?? process.env)
    const logger = ctx.logger('otel-traces')
    const warn = (message: string) => logger.warn(message)
    const { provider, ids, connections } = startTracing(config, headers, warn, options.exporter)
    const tracer = provider.getTracer('cordage.otel-traces', manifest.version)
    // The failure itself was logged by the exporter; what the flush rejects with adds nothing.
    const flush = () => void provider.forceFlush().catch((error) => logger.debug(`flush: ${(error as Error)?.message}`))
    const spans = new RunTracer(tracer, ids, {
      agent: String((ctx as unknown as Record<symbol, unknown>)[AgentKey] ?? 'agent'),
      providerName: config.providerName,
      drained: flush,
    })
    const listen = ctx.on as (type: string, listener: (event: RunEvent) => void) => () => void
    for (const type of RunEventTypes) {
      listen(type, (event) => {
        try {
          spans.handle(event)
        } catch (error) {
          // A tracing bug must not become the run's problem.
          warn(`could not trace ${event.type} (seq ${event.seq}) of ${event.runId}: ${(error as Error)?.message}`)
        }
      })
    }
    ctx.on('dispose', () => {
      spans.closeAll(Date.now())
      // The last export gets a short while, then is dropped: a process that is exiting (a `cordage run`
      // whose run is over) must not wait timeoutMs for a collector that hangs. Unref'd, the timer itself
      // holds nothing: it fires only if an export is still open then.
      const waitMs = Math.min(config.timeoutMs, ExitWaitMs)
      const giveUp = setTimeout(() => connections?.close(`the plugin stopped and waited ${waitMs} ms for the collector, no longer`), waitMs)
      giveUp.unref()
      void provider
        .shutdown()
        .catch((error) => logger.debug(`shutdown: ${(error as Error)?.message}`))
        .finally(() => clearTimeout(giveUp))
    })
  })
}

export default createOtelTraces()
