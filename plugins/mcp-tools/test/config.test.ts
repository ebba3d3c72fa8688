/**
 * mcp-tools refusing to start, through the host: each failure names what was wrong, where in the
 * config, and how to fix it (with the server's own stderr when it has something to say), and leaves
 * no server process behind.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { describe, it } from 'node:test'
import type { CordageError } from 'cordage'
import { supportDesk, tempDir } from '../../../test/helpers.ts'
import { allExited, fixtureFiles, serverPids, stdioServer, type FixtureFiles } from './fixture-server.ts'

/** A port nothing listens on (it was free a moment ago). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

function newFiles(): FixtureFiles {
  return fixtureFiles(tempDir('cordage-mcp-config-'))
}

async function startWith(servers: unknown[]) {
  const harness = await supportDesk({
    script: [],
    verifier: { minCount: 0 },
    plugins: [{ plugin: 'mcp-tools', config: { log: false, servers } }],
  })
  await harness.stop()
}

/** Starting fails with `code`, and the message matches every pattern. */
async function refused(servers: unknown[], code: string, ...patterns: RegExp[]): Promise<string> {
  let message = ''
  await assert.rejects(startWith(servers), (error: CordageError) => {
    assert.equal(error.code, code, error.message)
    for (const pattern of patterns) assert.match(error.message, pattern)
    message = error.message
    return true
  })
  return message
}

describe('mcp-tools configuration and start failures', () => {
  it('names a command that does not exist', async () => {
    await refused(
      [{ name: 'orders', command: 'no-such-mcp-server-anywhere' }],
      'plugin_start_failed',
      /plugin mcp-tools@1\.0\.0 \(.*\) failed while starting: MCP server servers\[0\] \("orders"\): cannot start "no-such-mcp-server-anywhere": no such program on PATH; check servers\[0\] \("orders"\)\.command/,
    )
  })

  it('shows how a server that exits at once ended, and the tail of its stderr', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { env: { MCP_FIXTURE_FAIL_START: 'cannot open orders.db: database is locked' } }, 'orders')],
      'plugin_start_failed',
      /the server process exited with code 3 before the MCP handshake completed; check servers\[0\] \("orders"\)\.command and args\. Its stderr ends with:\n {4}fixture: starting up\n {4}fixture: cannot open orders\.db: database is locked$/,
    )
  })

  it('gives up on a server that never completes the handshake, and stops it', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { env: { MCP_FIXTURE_HANG: '1' }, connectTimeoutMs: 3000 }, 'orders')],
      'plugin_start_failed',
      /did not complete the MCP handshake within 3000 ms \(servers\[0\] \("orders"\)\.connectTimeoutMs\)\. Its stderr ends with:\n {4}fixture: waiting for something that never comes$/,
    )
    assert.equal(serverPids(files).length, 1)
    await allExited(serverPids(files))
  })

  it('names an HTTP endpoint where nothing listens', async () => {
    const port = await freePort()
    await refused(
      [{ name: 'remote', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, connectTimeoutMs: 2000 }],
      'plugin_start_failed',
      new RegExp(
        `nothing accepts connections at http://127\\.0\\.0\\.1:${port}/mcp \\(ECONNREFUSED\\); is the server running\\? \\(servers\\[0\\] \\("remote"\\)\\.url\\)`,
      ),
    )
    // fetch refuses some ports outright; the reason is in the message, not only "fetch failed".
    await refused(
      [{ name: 'remote', transport: 'http', url: 'http://127.0.0.1:9/mcp' }],
      'plugin_start_failed',
      /cannot connect to http:\/\/127\.0\.0\.1:9\/mcp: fetch failed: bad port; check servers\[0\] \("remote"\)\.url/,
    )
  })

  it('wants a command for stdio and a url for http, and says which transport fits what was given', async () => {
    await refused(
      [{ name: 'orders' }],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.command: transport stdio needs the command that starts the server/,
    )
    await refused(
      [{ name: 'orders', url: 'http://127.0.0.1:9/mcp' }],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.command: .*it has a url: set transport: http/,
    )
    await refused(
      [{ name: 'remote', transport: 'http' }],
      'plugin_config_invalid',
      /servers\[0\] \("remote"\)\.url: transport http needs the server's MCP endpoint/,
    )
    await refused(
      [{ name: 'remote', transport: 'http', url: 'not a url' }],
      'plugin_config_invalid',
      /servers\[0\] \("remote"\)\.url: "not a url" is not a URL/,
    )
  })

  it('refuses two servers with one namespace, and a namespace that is not a name', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, {}, 'orders'), stdioServer(files, {}, 'orders')],
      'plugin_config_invalid',
      /servers\[1\] \("orders"\)\.name: servers\[0\] already uses the namespace "orders"/,
    )
    await refused([stdioServer(files, {}, 'my orders')], 'plugin_config_invalid', /servers\[0\]\.name/)
  })

  it('names an environment variable that is not set, without starting anything', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { env: { TOKEN: '${CORDAGE_TEST_UNSET_VARIABLE}' } }, 'orders')],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.env\.TOKEN: the environment variable CORDAGE_TEST_UNSET_VARIABLE \(from \$\{CORDAGE_TEST_UNSET_VARIABLE\}\) is not set/,
    )
    assert.equal(serverPids(files).length, 0)
  })

  it('refuses a contract for a tool the server does not have, with the closest name, and stops the server', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { tools: { lookup_ordr: { sideEffect: 'none' } } }, 'orders')],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.tools\["lookup_ordr"\]: the server has no tool "lookup_ordr" \(did you mean "lookup_order"\?\); it has: lookup_order, append_note/,
    )
    await allExited(serverPids(files))
  })

  it('asks for a rename when two tools would share a registry name, or a name is too long', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { tools: { slow: { rename: 'get_status' } } }, 'orders')],
      'plugin_config_invalid',
      /tools "slow" and "get\.status" would both be registered as "orders__get_status"; set servers\[0\] \("orders"\)\.tools\["get\.status"\]\.rename, or leave the tool out with servers\[0\] \("orders"\)\.exclude/,
    )
    await refused(
      [stdioServer(files, { tools: { slow: { rename: 'x'.repeat(60) } } }, 'orders')],
      'plugin_config_invalid',
      /tool "slow" would be registered as "orders__x+", longer than the 64 characters a tool name may have/,
    )
    await allExited(serverPids(files))
  })

  it('keeps secrets out of start failures, even when the server prints them', async () => {
    const files = newFiles()
    const secret = 'sk-' + Math.random().toString(36).slice(2)
    process.env.CORDAGE_TEST_MCP_SECRET = secret
    try {
      const message = await refused(
        [stdioServer(files, { env: { MCP_FIXTURE_FAIL_START: 'login failed for ${CORDAGE_TEST_MCP_SECRET}' } }, 'orders')],
        'plugin_start_failed',
        /fixture: login failed for \[redacted\]/,
      )
      assert.ok(!message.includes(secret))
    } finally {
      delete process.env.CORDAGE_TEST_MCP_SECRET
    }
  })

  it('starts with include/exclude narrowing the tools, and a rename', async () => {
    const files = newFiles()
    const harness = await supportDesk({
      script: [],
      verifier: { minCount: 0 },
      plugins: [
        {
          plugin: 'mcp-tools',
          config: {
            log: false,
            servers: [
              stdioServer(
                files,
                {
                  include: ['lookup_*', 'append_*', 'get.status'],
                  exclude: ['append_then_crash'],
                  tools: { 'get.status': { rename: 'health' } },
                },
                'orders',
              ),
            ],
          },
        },
      ],
    })
    try {
      const { readService } = await import('cordage')
      const names = readService<import('cordage').ToolsService>(harness.agent.ctx, 'tools')!
        .value.list()
        .map((t) => t.name)
        .filter((n) => n.startsWith('orders__'))
        .sort()
      assert.deepEqual(names, ['orders__append_note', 'orders__health', 'orders__lookup_order'])
    } finally {
      await harness.stop()
      await allExited(serverPids(files))
    }
  })

  it('refuses an include pattern that matches no tool, and a contract for a tool left out', async () => {
    const files = newFiles()
    await refused(
      [stdioServer(files, { include: ['lookup_ordr', 'append_note'] }, 'orders')],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.include\[0\]: "lookup_ordr" matches no tool of the server \(did you mean "lookup_order"\?\)/,
    )
    await refused(
      [stdioServer(files, { include: ['lookup_order'], tools: { append_note: { idempotent: true } } }, 'orders')],
      'plugin_config_invalid',
      /servers\[0\] \("orders"\)\.tools\["append_note"\]: a contract for a tool that include\/exclude leave out/,
    )
    await allExited(serverPids(files))
  })
})
