/**
 * mcp-tools over streamable HTTP, against the fixture server running as its own process on a local
 * port: calls, a server killed and started again on the same port, a server dying mid-call, a
 * forgotten session, and credentials read from the environment.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { readService, type ToolsService } from 'cordage'
import { supportDesk, tempDir, type Harness } from '../../../test/helpers.ts'
import {
  allExited,
  callsOf,
  effects,
  fixtureFiles,
  invoke,
  serverPids,
  startHttpFixture,
  type FixtureFiles,
  type HttpFixture,
} from './fixture-server.ts'

let harness: Harness | undefined
let files: FixtureFiles | undefined
const servers: HttpFixture[] = []

afterEach(async () => {
  await harness?.stop()
  harness = undefined
  for (const server of servers.splice(0)) await server.kill()
  if (files) await allExited(serverPids(files))
  files = undefined
})

async function serve(port = 0, env: Record<string, string> = {}): Promise<HttpFixture> {
  files ??= fixtureFiles(tempDir('cordage-mcp-http-'))
  const server = await startHttpFixture(files, port, env)
  servers.push(server)
  return server
}

async function desk(url: string, server: Record<string, unknown> = {}, script: unknown[] = []): Promise<Harness> {
  harness = await supportDesk({
    script: script as never,
    rules: [{ id: 'all', verdict: 'allow' }],
    verifier: { minCount: 0 },
    plugins: [
      {
        plugin: 'mcp-tools',
        config: {
          log: false,
          reconnect: { attempts: 2, initialDelayMs: 20, maxDelayMs: 50 },
          servers: [{ name: 'remote', transport: 'http', url, connectTimeoutMs: 5000, ...server }],
        },
      },
    ],
  })
  return harness
}

function tool(h: Harness, name: string) {
  const found = readService<ToolsService>(h.agent.ctx, 'tools')!.value.get(name)
  assert.ok(found, `${name} is registered`)
  return found
}

describe('mcp-tools over streamable HTTP', () => {
  it("runs an agent on an HTTP server's tools, with the idempotency key in _meta", async () => {
    const server = await serve()
    const h = await desk(server.url, { tools: { lookup_order: { sideEffect: 'none' } } }, [
      { tool: 'remote__lookup_order', args: { orderId: 'O-2' } },
      { tool: 'remote__append_note', args: { note: 'checked O-2' } },
      { final: 'O-2 checked.' },
    ])
    const state = await h.agent.run('Check O-2')
    assert.equal(state.status, 'COMPLETED')
    const events = await h.events(state.runId)
    assert.deepEqual(
      events.filter((e) => e.type === 'tool/end').map((e) => e.actionId),
      ['s1.a1', 's2.a1'],
    )
    assert.equal(effects(files!).length, 1)
    assert.equal(effects(files!)[0].key, `${state.runId}/s2.a1`)
  })

  it('reconnects when the server is killed and started again on the same port; meanwhile calls are tool_unavailable', async () => {
    const first = await serve()
    const h = await desk(first.url)
    assert.match((await invoke(tool(h, 'remote__lookup_order'), { orderId: 'O-1' })).observation!, /Order O-1/)

    await first.kill()
    // Give the client the moment it takes to see its event stream break. A call racing the death itself
    // may go out on the dead keep-alive socket, which fails the same way as a server dying mid-call, and
    // is then (safely) reported as tool_connection_lost instead.
    await new Promise((r) => setTimeout(r, 300))
    await assert.rejects(invoke(tool(h, 'remote__append_note'), { note: 'while down' }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'tool_unavailable')
      assert.match(
        error.message,
        /MCP server "remote" is down and reconnecting failed, so nothing was sent: nothing accepts connections at http:\/\/127\.0\.0\.1:\d+\/mcp \(ECONNREFUSED\)/,
      )
      return true
    })
    assert.equal(effects(files!).length, 0)

    await serve(first.port)
    assert.match((await invoke(tool(h, 'remote__lookup_order'), { orderId: 'O-1' })).observation!, /Order O-1/)
    const pids = callsOf(files!, 'lookup_order').map((c) => c.pid)
    assert.equal(pids.length, 2)
    assert.notEqual(pids[0], pids[1], 'the second call was answered by the restarted server')
  })

  it('reports tool_connection_lost when the server dies during a call', async () => {
    const server = await serve()
    const h = await desk(server.url)
    await assert.rejects(invoke(tool(h, 'remote__append_then_crash'), { note: 'n' }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'tool_connection_lost')
      assert.match(error.message, /Whether the call took effect is unknown/)
      return true
    })
    assert.equal(effects(files!).length, 1, 'it did take effect: exactly why the outcome is reported unknown, not failed')
  })

  it('starts a new session when the server no longer knows the old one, without sending the call twice', async () => {
    const server = await serve()
    const h = await desk(server.url)
    await invoke(tool(h, 'remote__forget_sessions'), {})
    assert.match((await invoke(tool(h, 'remote__lookup_order'), { orderId: 'O-5' })).observation!, /Order O-5/)
    assert.equal(callsOf(files!, 'lookup_order').length, 1)
  })

  it('sends credentials from the environment and keeps them out of errors and results', async () => {
    const token = 'tok-' + Math.random().toString(36).slice(2)
    process.env.CORDAGE_TEST_MCP_TOKEN = token
    try {
      const server = await serve(0, { MCP_FIXTURE_TOKEN: token, MCP_FIXTURE_SECRET: token })
      const h = await desk(server.url, { headers: { Authorization: 'Bearer ${CORDAGE_TEST_MCP_TOKEN}' } })
      const result = await invoke(tool(h, 'remote__whoami'), {})
      assert.equal(result.observation, 'token=[redacted]')
      assert.deepEqual(result.output, [{ type: 'text', text: 'token=[redacted]' }])
      await h.stop()
      harness = undefined

      process.env.CORDAGE_TEST_MCP_TOKEN = token + '-wrong'
      await assert.rejects(
        desk(server.url, { headers: { Authorization: 'Bearer ${CORDAGE_TEST_MCP_TOKEN}' } }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'plugin_start_failed')
          assert.match(error.message, /refused the connection with HTTP 401; check the credentials in servers\[0\] \("remote"\)\.headers/)
          assert.ok(!error.message.includes(token), 'the token is not in the message')
          return true
        },
      )
    } finally {
      delete process.env.CORDAGE_TEST_MCP_TOKEN
    }
  })
})
