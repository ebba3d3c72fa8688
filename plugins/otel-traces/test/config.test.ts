/**
 * The config is checked strictly when the preset loads or the plugin starts: an unknown key, an
 * endpoint that is not an HTTP URL, a secret header whose variable is unset or that holds the secret
 * itself. And the documented examples are configs the plugin accepts.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import type { CordageError } from 'cordage'
import { Cordage } from 'cordage/host'
import manifest from '../manifest.ts'
import { deskFile, open } from './desk.ts'

const refused = async (config: Record<string, unknown>, pattern: RegExp) => {
  await assert.rejects(
    (async () => {
      const { app } = await open(deskFile(config))
      await app.stop()
    })(),
    (error: CordageError) => {
      assert.equal(error.code, 'plugin_config_invalid', error.message)
      assert.match(error.message, pattern)
      return true
    },
  )
}

const root = resolve(import.meta.dirname, '../../..')
const text = (file: string) => readFileSync(resolve(root, file), 'utf8')
const keys = Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict)

describe('otel-traces config', () => {
  it('an unknown key is an error naming it', async () => {
    await refused(
      { endpiont: 'http://127.0.0.1:4318/v1/traces' },
      /config\.endpiont: plugin otel-traces@1\.0\.0 has no config key "endpiont"; allowed: endpoint, /,
    )
  })

  it('a processor or timeout out of range is an error naming the key', async () => {
    await refused({ processor: 'eventually' }, /processor/)
    await refused({ timeoutMs: 0 }, /timeoutMs/)
    // Longer would hold an exiting process, or a swap, for as long as a collector hangs.
    await refused({ timeoutMs: 60_001 }, /timeoutMs/)
    const { app } = await open(deskFile({ timeoutMs: 60_000 }))
    await app.stop()
  })

  it('a credential in headers is refused, pointing to headersEnv, and its value is never echoed', async () => {
    const names = [
      'authorization',
      'Authorization',
      'x-api-key',
      'api-key',
      'x-honeycomb-team',
      'DD-API-KEY',
      'x-sf-token',
      'x-client-secret',
      'cookie',
    ]
    for (const name of names) {
      await assert.rejects(
        (async () => (await open(deskFile({ headers: { [name]: 'Bearer sk-live-in-the-preset' } }))).app.stop())(),
        (error: CordageError) => {
          assert.equal(error.code, 'plugin_config_invalid', error.message)
          assert.match(
            error.message,
            new RegExp(
              `headers\\.${name} looks like a credential.*name it in headersEnv instead \\(headersEnv: \\{ ${name}: OTEL_EXPORTER_AUTH \\}\\)`,
            ),
          )
          assert.ok(!error.message.includes('sk-live'), 'the value is not repeated')
          return true
        },
      )
    }
    // A header that is not a credential stays in the preset.
    const { app } = await open(deskFile({ headers: { 'x-tenant': 'support', 'x-scope-orgid': 'team-a' } }))
    await app.stop()
  })

  it('an endpoint that is not an http(s) URL, or that holds credentials, is refused', async () => {
    await refused({ endpoint: 'localhost:4318' }, /endpoint "localhost:4318" must start with http:\/\/ or https:\/\/|is not a URL/)
    await refused({ endpoint: 'not a url' }, /endpoint "not a url" is not a URL/)
    await refused(
      { endpoint: 'http://me:secret@127.0.0.1:4318/v1/traces' },
      /user name or password; send credentials in a header named in headersEnv/,
    )
  })

  it('a secret header: its variable must be set, and a value that is not a variable name is never echoed', async () => {
    delete process.env.CORDAGE_OTEL_UNSET
    await refused(
      { headersEnv: { authorization: 'CORDAGE_OTEL_UNSET' } },
      /headersEnv\.authorization: the environment variable CORDAGE_OTEL_UNSET is not set/,
    )
    const leaked = 'Bearer sk-live-not-a-variable'
    await assert.rejects(
      (async () => (await open(deskFile({ headersEnv: { authorization: leaked } }))).app.stop())(),
      (error: CordageError) => {
        assert.match(error.message, /headersEnv\.authorization must name an environment variable/)
        assert.ok(!error.message.includes('sk-live'), 'the secret is not repeated')
        return true
      },
    )
  })

  it('service.name goes in serviceName, and each header once', async () => {
    await refused({ resource: { 'service.name': 'x' } }, /resource sets service\.name; set it with the key serviceName/)
    process.env.CORDAGE_OTEL_DUP = 'abcdefghijkl'
    await refused(
      { headers: { 'X-Tenant': 'a' }, headersEnv: { 'x-tenant': 'CORDAGE_OTEL_DUP' } },
      /header x-tenant is also given in headers/,
    )
  })

  it("a secret header's value is scrubbed from what runs record, like a model key", async () => {
    process.env.CORDAGE_OTEL_SCRUB = 'Bearer otel-scrub-me-0123456789'
    const { app } = await open(
      deskFile({ headersEnv: { authorization: 'CORDAGE_OTEL_SCRUB' }, endpoint: 'http://127.0.0.1:9/v1/traces', timeoutMs: 50 }),
    )
    try {
      const agent = app.agent('support')
      const state = await agent.run(`refunds? my token is ${process.env.CORDAGE_OTEL_SCRUB}`)
      const [start] = await agent.store().load(state.runId)
      assert.equal(start.type, 'run/start')
      assert.equal((start.data as { task: string }).task, 'refunds? my token is [redacted:CORDAGE_OTEL_SCRUB]')
    } finally {
      await app.stop()
    }
  })

  it('the README lists exactly the config keys', () => {
    const documented = [...text('plugins/otel-traces/README.md').matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1])
    assert.deepEqual(documented, keys)
  })

  it("the guide's preset loads as it is, with the plugin in it", async () => {
    const guide = text('docs/guides/opentelemetry.md')
    const block = [...guide.matchAll(/```yaml\n(# preset[\s\S]*?)```/g)].map((m) => m[1])
    assert.equal(block.length, 1, 'one preset block, starting "# preset"')
    const preset = parse(block[0]) as { agents: Record<string, { plugins: unknown[] }> }
    const entry = Object.values(preset.agents)[0].plugins.find((p) => (p as { plugin?: string }).plugin === 'otel-traces') as {
      config: Record<string, unknown>
    }
    assert.ok(entry, 'the preset names otel-traces')
    for (const key of Object.keys(entry.config)) assert.ok(keys.includes(key), `otel-traces has no config key ${key}`)
    const file = resolve(root, 'docs/examples/otel-support-desk.yml')
    assert.equal(text('docs/examples/otel-support-desk.yml'), block[0], 'the guide shows docs/examples/otel-support-desk.yml as it is')
    const app = await Cordage.fromPreset(file)
    await app.stop()
  })
})
