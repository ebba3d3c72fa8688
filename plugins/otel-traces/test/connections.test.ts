/**
 * The agent the plugin gives the OTLP exporter, with the real exporter and real sockets on loopback:
 * a refused connection is tried once, not retried with backoff until the timeout; and close() ends an
 * export that hangs with its reason, and every later one at once. Counted, not timed: how many
 * connections the exporter opened by the time the export's result came back.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { Connections } from '../connections.ts'
import { startReceiver } from './receiver.ts'
import { until } from './desk.ts'

type Result = { code: number; error?: Error }

function counted(url: string) {
  const connections = new Connections()
  const opened = { count: 0 }
  const exporter = new OTLPTraceExporter({
    url,
    timeoutMillis: 30_000,
    httpAgentOptions: (protocol: string) => {
      const agent = connections.agentFor(protocol)
      const connect = agent.createConnection.bind(agent)
      agent.createConnection = ((...args: Parameters<typeof connect>) => {
        opened.count++
        return connect(...args)
      }) as typeof agent.createConnection
      return agent
    },
  })
  const span = new BasicTracerProvider().getTracer('test').startSpan('one')
  span.end()
  const send = () => new Promise<Result>((done) => exporter.export([span as unknown as ReadableSpan], done))
  return { connections, opened, send }
}

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  await new Promise((r) => server.close(r))
  return port
}

describe('otel-traces connections', () => {
  it('a refused connection fails the export after one attempt, with the system message', async () => {
    const port = await closedPort()
    const { opened, send } = counted(`http://127.0.0.1:${port}/v1/traces`)
    const result = await send()
    assert.equal(result.code, 1, 'failed')
    assert.equal(result.error?.message, `connect ECONNREFUSED 127.0.0.1:${port}`)
    assert.equal(opened.count, 1, 'no retry: one connection by the time the export failed')
  })

  it('close() ends an export that hangs with its reason, and later exports fail at once without connecting', async () => {
    const receiver = await startReceiver('hang')
    try {
      const { connections, opened, send } = counted(receiver.url)
      const pending = send()
      await until(() => receiver.open() === 1, 'the request to reach the receiver')
      connections.close('stopped waiting')
      const result = await pending
      assert.deepEqual([result.code, result.error?.message], [1, 'stopped waiting'])
      const later = await send()
      assert.deepEqual([later.code, later.error?.message], [1, 'stopped waiting'])
      assert.equal(opened.count, 2, 'the later export was refused by the agent, not retried')
      assert.equal(receiver.requests.length, 1)
    } finally {
      await receiver.close()
    }
  })
})
