/**
 * @module otel-traces/export
 * The plugin's own tracer provider (never registered as the global one: an application that embeds
 * Cordage keeps its own), sending over OTLP/HTTP, or to an exporter the embedding code gives. An
 * export that fails or times out is logged and dropped: a run never waits for its spans to be sent.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { Connections } from './connections.ts'
import { RunIds } from './ids.ts'
import type { Config } from './manifest.ts'

export type Warn = (message: string) => void

type ExportDone = Parameters<SpanExporter['export']>[1]
type ExportResult = Parameters<ExportDone>[0]
/** ExportResultCode of @opentelemetry/core, which this plugin does not depend on directly. */
const Success = 0
const Failed = 1

/** Passes spans on to `inner`, and says so when an export fails. */
export class LoggedExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly where: string,
    private readonly warn: Warn,
  ) {}

  export(spans: ReadableSpan[], done: ExportDone): void {
    const report = (result: ExportResult) => {
      if (result.code !== Success)
        this.warn(
          `could not export ${spans.length} span(s) to ${this.where}: ${result.error?.message ?? 'export failed'}; they are dropped`,
        )
      done(result)
    }
    try {
      this.inner.export(spans, report)
    } catch (error) {
      report({ code: Failed, error: error as Error })
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown()
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve()
  }
}

/** How long the plugin, once disposed, waits for its last exports before dropping them (or timeoutMs if shorter). */
export const ExitWaitMs = 2_000

export interface Tracing {
  provider: BasicTracerProvider
  ids: RunIds
  /** The OTLP exporter's connections; none when an exporter was given. */
  connections?: Connections
}

/** The endpoint as logs may show it: no query string (it may carry a token) and no user info. */
export function shownEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint)
    return `${url.origin}${url.pathname}`
  } catch {
    return '(the endpoint)'
  }
}

/**
 * @param headers every header to send, secret ones already read from the environment
 * @param exporter instead of OTLP/HTTP (tests, an embedding application)
 */
export function startTracing(config: Config, headers: Record<string, string>, warn: Warn, exporter?: SpanExporter): Tracing {
  const connections = exporter ? undefined : new Connections()
  const inner =
    exporter ??
    new OTLPTraceExporter({
      url: config.endpoint,
      headers,
      timeoutMillis: config.timeoutMs,
      concurrencyLimit: 4,
      httpAgentOptions: connections!.agentFor,
    })
  const logged = new LoggedExporter(inner, exporter ? 'the given exporter' : shownEndpoint(config.endpoint), warn)
  const processor =
    config.processor === 'simple'
      ? new SimpleSpanProcessor(logged)
      : new BatchSpanProcessor(logged, { exportTimeoutMillis: config.timeoutMs, scheduledDelayMillis: 1000 })
  const ids = new RunIds()
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resource, [ATTR_SERVICE_NAME]: config.serviceName }),
    idGenerator: ids,
    spanProcessors: [processor],
  })
  return { provider, ids, connections }
}
