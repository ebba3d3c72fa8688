/**
 * Bad presets, bad manifests and bad plugin config: each gives a clear error naming the file, the key
 * path, what was expected and what was found, and nothing is left plugged. Fixtures are named after
 * the defect they carry (test/fixtures/presets/<defect>.yml).
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Context } from 'cordis'
import type { CordageError, PluginEvent } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { checkManifest } from '../core/host/manifest-check.ts'
import { loadPreset } from '../core/host/preset.ts'

const fixture = (name: string) => resolve(import.meta.dirname, 'fixtures/presets', `${name}.yml`)

async function loadError(name: string, root?: Context): Promise<CordageError> {
  try {
    const app = await Cordage.fromPreset(fixture(name), { root })
    await app.stop()
  } catch (error) {
    return error as CordageError
  }
  assert.fail(`${name}.yml loaded without an error`)
}

describe('presets', () => {
  it('names the keys that exist under budgets.thread and audit when one is misspelt', () => {
    for (const [set, expected] of [
      [
        'agents.support.budgets.thread.maxTurn=3',
        /budgets\.thread\.maxTurn: unknown key "maxTurn"; allowed here: maxTurns, maxTokens, maxCostUsd$/m,
      ],
      ['agents.support.audit.keepRedcted=true', /audit\.keepRedcted: unknown key "keepRedcted"; allowed here: keepRedacted$/m],
    ] as const)
      assert.throws(
        () => loadPreset(fixture('valid'), { sets: [set] }),
        (error: CordageError) => error.code === 'preset_invalid' && expected.test(error.message),
      )
  })

  it('loads a valid preset and runs it', async () => {
    const app = await Cordage.fromPreset(fixture('valid'))
    assert.equal((await app.agent('support').run('hi')).status, 'COMPLETED')
    await app.stop()
  })

  const cases: [string, string, RegExp[]][] = [
    ['invalid-yaml', 'preset_invalid', [/invalid-yaml\.yml:5:1/, /not valid YAML/]],
    [
      'unknown-key',
      'preset_invalid',
      [/unknown-key\.yml:5:7 agents\.support\.budgets\.maxStep: unknown key "maxStep"; allowed here: maxSteps,/],
    ],
    ['wrong-type', 'preset_invalid', [/wrong-type\.yml:5:7 agents\.support\.budgets\.maxSteps: expected number, found "ten"/]],
    ['no-agents', 'preset_invalid', [/no-agents\.yml:2:1 agents: expected at least one agent, found \{\}/]],
    [
      'plugin-and-path',
      'preset_invalid',
      [/plugin-and-path\.yml:17:9 agents\.support\.plugins\[4\]: expected exactly one of "plugin" \(a name\) or "path" \(a folder\)/],
    ],
    [
      'unknown-plugin',
      'plugin_not_found',
      [
        /unknown-plugin\.yml:17:9 agents\.support\.plugins\[4\]: no plugin named "polcy-rules" is installed \(did you mean "policy-rules"\?\)/,
      ],
    ],
    [
      'unsatisfiable-range',
      'plugin_version_unsatisfiable',
      [/agents\.support\.plugins\[4\]: no installed version of "policy-rules" satisfies \^3\.0\.0 \(installed: 2\.1\.0, 1\.0\.0\)/],
    ],
    [
      'bad-plugin-config',
      'plugin_config_invalid',
      [
        /bad-plugin-config\.yml:21:15 agents\.support\.plugins\[4\]\.config\.rules\[0\]\.verdict: plugin policy-rules@2\.1\.0: expected "allow" \| "ask" \| "deny" but got "alow"/,
      ],
    ],
    [
      'unknown-config-key',
      'plugin_config_invalid',
      [
        /unknown-config-key\.yml:19:11 agents\.support\.plugins\[4\]\.config\.ruls: plugin policy-rules@2\.1\.0 has no config key "ruls"; allowed: rules, default, approvers, environment/,
      ],
    ],
    [
      'missing-service',
      'service_missing',
      [/missing-service\.yml:3:3 agents\.support: the agent has no plugin that provides "verifier".*add one of: verifier-basic/],
    ],
    [
      'incompatible-requirement',
      'plugin_requirement_incompatible',
      [
        /plugin "requires-tools-2@1\.0\.0" \(.*agents\.support\.plugins\[5\]\) requires service "tools" \^2\.0\.0 \(manifest field requires\.tools\), but tools-registry@1\.0\.0 \(agents\.support\.plugins\[1\]\) provides "tools" 1\.0\.0/,
      ],
    ],
    ['duplicate-provider', 'plugin_conflict', [/"second-store" and "store-memory" \(agents\.support\.plugins\[0\]\) both provide "store"/]],
    ['duplicate-plugin', 'plugin_conflict', [/plugin "policy-rules" is already used by this agent at agents\.support\.plugins\[4\]/]],
    [
      'model-not-a-model',
      'plugin_requirement_missing',
      [/agents\.support\.model: "context-basic" is named as the model but does not provide "model"/],
    ],
    [
      'outside-plugin-wrong-version',
      'plugin_version_unsatisfiable',
      [/the plugin at .*greeter is greeter@0\.3\.0, which does not satisfy \^1\.0\.0/],
    ],
    [
      'bad-manifest',
      'manifest_invalid',
      [
        /plugin "Bad_Name" \(.*bad-manifest\/manifest\.ts\) has an invalid manifest/,
        /name: expected lower-case letters.*found "Bad_Name"/,
        /version: expected a semver version such as 1\.0\.0, found "one"/,
        /requires\.tools: expected a semver range such as \^1\.0\.0, found "whatever"/,
        /extra: not a manifest field/,
      ],
    ],
    [
      'throws-on-start',
      'plugin_start_failed',
      [
        /plugin throws-on-start@1\.0\.0 \(.*throws-on-start\.yml:\d+:\d+ agents\.support\.plugins\[5\]\) failed while starting: database unreachable/,
      ],
    ],
    [
      'duplicate-rule-id',
      'plugin_config_invalid',
      [
        /plugin policy-rules@2\.1\.0 \(.*duplicate-rule-id\.yml:10:9 agents\.support\.plugins\[4\]\) failed while starting: policy-rules: rule id "same" is used twice/,
      ],
    ],
    [
      'undeclared-service',
      'plugin_requirement_missing',
      [
        /plugin undeclared-tools@1\.0\.0 \(.*agents\.support\.plugins\[0\]\) uses service "tools" without requiring it; add tools: '\^1\.0\.0' to "requires" in its manifest/,
      ],
    ],
    [
      'undeclared-service-late',
      'plugin_requirement_missing',
      [/plugin undeclared-tools@1\.0\.0 \(.*agents\.support\.plugins\[5\]\) uses service "tools" without requiring it/],
    ],
    [
      'forgets-service',
      'plugin_start_failed',
      [/plugin forgets-service@1\.0\.0 .* declares that it provides "verifier" but did not set it/],
    ],
  ]
  for (const [name, code, patterns] of cases) {
    it(`rejects ${name}.yml with ${code} and says where and what`, async () => {
      const error = await loadError(name)
      assert.equal(error.code, code, error.message)
      for (const pattern of patterns) assert.match(error.message, pattern)
    })
  }

  it('reports every problem of a preset at once', async () => {
    const error = await loadError('many-problems')
    assert.equal(error.code, 'preset_invalid')
    assert.match(error.message, /has 3 problem\(s\)/)
    assert.match(error.message, /many-problems\.yml:5:7 agents\.support\.budgets\.maxSteps: expected a number ≥ 1, found -1/)
    assert.match(error.message, /many-problems\.yml:6:7 agents\.support\.budgets\.maxCost: unknown key "maxCost"/)
    assert.match(
      error.message,
      /many-problems\.yml:9:7 agents\.support\.model\.version: expected a semver range such as \^1\.0\.0, found "not a range"/,
    )
    assert.equal((error.data as string[]).length, 3)
  })

  it('leaves nothing plugged when a plugin fails to start', async () => {
    const root = new Context()
    const loaded: string[] = []
    const disposed: string[] = []
    root.on('plugin/loaded', (e: PluginEvent) => loaded.push(e.name))
    root.on('plugin/disposed', (e: PluginEvent) => disposed.push(e.name))
    const failed: PluginEvent[] = []
    root.on('plugin/failed', (e: PluginEvent) => failed.push(e))
    const error = await loadError('throws-on-start', root)
    assert.equal(error.code, 'plugin_start_failed')
    assert.ok(loaded.length >= 5, 'the plugins before the failing one had started')
    assert.deepEqual([...disposed].sort(), [...loaded].sort(), 'and every one of them was disposed again')
    assert.deepEqual(
      failed.map((f) => [f.name, f.code]),
      [['throws-on-start', 'plugin_start_failed']],
    )
  })

  it('uses a plugin from a folder outside plugins/, given by a path relative to the preset', async () => {
    const app = await Cordage.fromPreset(fixture('outside-plugin'))
    assert.equal(app.pluginsOf('support').greeter, '0.3.0')
    await app.stop()
  })

  it('never writes to the preset file', async () => {
    const file = fixture('valid')
    const before = { hash: createHash('sha256').update(readFileSync(file)).digest('hex'), mtime: statSync(file).mtimeMs }
    const app = await Cordage.fromPreset(file)
    await app.agent('support').run('hi')
    await app.swap('support', 'verifier-basic', { config: { minCount: 1 } })
    await app.stop()
    assert.deepEqual({ hash: createHash('sha256').update(readFileSync(file)).digest('hex'), mtime: statSync(file).mtimeMs }, before)
  })

  it('names the preset that does not exist', () => {
    assert.throws(() => loadPreset('nope/missing.yml'), { code: 'preset_not_found', message: /nope\/missing\.yml does not exist/ })
  })
})

describe('manifests', () => {
  it('accepts a well-formed manifest', () => {
    assert.equal(
      checkManifest({ name: 'ok', version: '1.2.3', provides: { policy: '1.0.0' }, requires: { store: '^1.0.0' } }, 'x').name,
      'ok',
    )
  })

  const bad: [string, unknown, RegExp][] = [
    ['a missing version', { name: 'x' }, /version: expected a semver version such as 1\.0\.0, found nothing/],
    [
      'a non-semver provides version',
      { name: 'x', version: '1.0.0', provides: { policy: 'v1' } },
      /provides\.policy: expected a semver version.*found "v1"/,
    ],
    [
      'a non-range requirement',
      { name: 'x', version: '1.0.0', requires: { tools: '>>1' } },
      /requires\.tools: expected a semver range.*found ">>1"/,
    ],
    ['a config that is not a schema', { name: 'x', version: '1.0.0', config: { a: 1 } }, /config: expected a schemastery schema/],
    [
      'a service both provided and required',
      { name: 'x', version: '1.0.0', provides: { store: '1.0.0' }, requires: { store: '^1.0.0' } },
      /both provides and requires "store"/,
    ],
    ['something that is not an object', 'policy-rules', /has an invalid manifest/],
  ]
  for (const [what, manifest, pattern] of bad) {
    it(`rejects ${what}`, () => {
      assert.throws(
        () => checkManifest(manifest, 'fixtures/x/manifest.ts'),
        (error: CordageError) => {
          assert.equal(error.code, 'manifest_invalid')
          assert.match(error.message, pattern)
          assert.match(error.message, /fixtures\/x\/manifest\.ts/)
          return true
        },
      )
    })
  }
})
