/**
 * @module otel-traces/ids
 * Every span of a run is in one trace whose id is derived from the run id, so the drives of a run that
 * paused in one process and resumed in another land in the same trace without either process telling
 * the other anything. Span ids stay random.
 */
import { createHash } from 'node:crypto'
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base'

/** 32 hex digits from the run id (never all zeros, which OpenTelemetry reads as "no trace"). */
export function traceIdOf(runId: string): string {
  const hex = createHash('sha256').update(`cordage-run:${runId}`).digest('hex').slice(0, 32)
  return /^0+$/.test(hex) ? '1'.padStart(32, '0') : hex
}

/** An IdGenerator that gives the next root span the trace id it is told to. */
export class RunIds implements IdGenerator {
  #next: string | undefined
  readonly #random = new RandomIdGenerator()

  /** Run `start` (which starts one root span) with `traceId` as that span's trace id. */
  withTrace<T>(traceId: string, start: () => T): T {
    this.#next = traceId
    try {
      return start()
    } finally {
      this.#next = undefined
    }
  }

  generateTraceId(): string {
    const next = this.#next
    this.#next = undefined
    return next ?? this.#random.generateTraceId()
  }

  generateSpanId(): string {
    return this.#random.generateSpanId()
  }
}
