/**
 * presets/openai.yml and presets/anthropic.yml, run by the real `cordage` binary against a local server
 * that speaks each provider's protocol: they work as soon as the key (and base URL) are in the
 * environment, and say which variable is missing when it is not.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { tempDir } from './temp.ts'
import { ProviderServer, type ScriptedReply } from './servers/provider-server.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')
const script = parse(readFileSync(resolve(import.meta.dirname, 'servers/support-desk.yml'), 'utf8')) as ScriptedReply[]

/** The binary as a child process, without blocking this process (the server answers from it). */
function cordage(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI|ANTHROPIC)_/.test(k)))
  return new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { cwd: tempDir(), env: { ...clean, NO_COLOR: '1', ...env } }, (error, stdout, stderr) => {
      done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

const cases = [
  { preset: 'presets/openai.yml', protocol: 'openai' as const, env: 'OPENAI' },
  { preset: 'presets/anthropic.yml', protocol: 'anthropic' as const, env: 'ANTHROPIC' },
]

for (const c of cases) {
  describe(c.preset, () => {
    it('runs the support desk once the key and base URL are set', async () => {
      const server = await ProviderServer.start({ protocol: c.protocol, apiKey: 'sk-preset-test-1234', replies: script })
      try {
        const { code, stdout, stderr } = await cordage(['run', '--preset', resolve(root, c.preset)], {
          [`${c.env}_API_KEY`]: 'sk-preset-test-1234',
          [`${c.env}_BASE_URL`]: server.baseUrl,
        })
        assert.equal(code, 0, stderr + stdout)
        assert.match(stdout, /tool\/end +s1\.a1 +lookup_policy/)
        assert.match(stdout, /verify\/end +s2 +ok evidence: policy\/refunds#2/)
        assert.match(stdout, /run\/end +t1 +COMPLETED steps=2/)
        assert.equal(server.requests.length, 2)
        assert.ok(!stdout.includes('sk-preset-test-1234') && !stderr.includes('sk-preset-test-1234'), 'the key was printed')
      } finally {
        await server.close()
      }
    })

    it('lists runs without the key: reading runs starts only the store', async () => {
      const { code, stdout, stderr } = await cordage(['runs', '--preset', resolve(root, c.preset)], {})
      assert.equal(code, 0, stderr)
      assert.match(stdout + stderr, /no runs in the store/)
    })

    it('exits 2 naming the variable when the key is missing', async () => {
      const { code, stderr } = await cordage(['run', '--preset', resolve(root, c.preset)], {})
      assert.equal(code, 2)
      assert.match(stderr, new RegExp(`${c.env}_API_KEY is not set`))
    })
  })
}
