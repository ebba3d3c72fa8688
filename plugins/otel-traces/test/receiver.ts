/**
 * An OTLP/HTTP receiver on loopback for the tests: it decodes what the exporter sends (OTLP JSON:
 * resourceSpans → scopeSpans → spans) and answers as told: 200, 500, or never.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Answer = 'ok' | 'fail' | 'hang'

/** An attribute value as OTLP JSON writes it, read back. */
type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
type KeyValue = { key: string; value: AnyValue }

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  start: bigint
  end: bigint
  attributes: Record<string, string | number | boolean>
  events: { name: string; attributes: Record<string, string | number | boolean> }[]
  links: { traceId: string; spanId: string }[]
  status: { code: number; message?: string }
  resource: Record<string, string | number | boolean>
  scope: { name: string; version?: string }
}

export interface Receiver {
  url: string
  spans: ReceivedSpan[]
  requests: { headers: IncomingHttpHeaders; contentType?: string }[]
  /** Requests that arrived and have not been answered. */
  open(): number
  close(): Promise<void>
}

const value = (v: AnyValue): string | number | boolean => {
  if (v.stringValue !== undefined) return v.stringValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.boolValue !== undefined) return v.boolValue
  throw new Error(`an attribute value of a kind this receiver does not read: ${JSON.stringify(v)}`)
}
const attributes = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]))

/** The spans of one OTLP JSON export request. */
export function decode(body: unknown): ReceivedSpan[] {
  const { resourceSpans } = body as { resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: any[] }[] }
  if (!Array.isArray(resourceSpans)) throw new Error('not an OTLP trace export: no resourceSpans')
  const out: ReceivedSpan[] = []
  for (const rs of resourceSpans) {
    const resource = attributes(rs.resource?.attributes)
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          start: BigInt(s.startTimeUnixNano),
          end: BigInt(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e: { name: string; attributes?: KeyValue[] }) => ({
            name: e.name,
            attributes: attributes(e.attributes),
          })),
          links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({ traceId: l.traceId, spanId: l.spanId })),
          status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
          resource,
          scope: { name: ss.scope?.name, version: ss.scope?.version },
        })
      }
    }
  }
  return out
}

export async function startReceiver(answer: Answer = 'ok'): Promise<Receiver> {
  const spans: ReceivedSpan[] = []
  const requests: Receiver['requests'] = []
  const waiting = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      requests.push({ headers: req.headers, contentType: req.headers['content-type'] })
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end()
        return
      }
      if (answer === 'hang') {
        waiting.add(res)
        res.on('close', () => waiting.delete(res))
        return
      }
      if (answer === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":13,"message":"the collector is broken"}')
        return
      }
      spans.push(...decode(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    requests,
    open: () => waiting.size,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}
