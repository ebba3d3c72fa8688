/**
 * Layered presets: `extends` chains merged by the documented rules, cycles and missing bases refused,
 * `--set` applied last and checked like the file, every problem placed in the layer that set it, and
 * no file ever written.
 */
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { CordageError } from '../core/contracts/errors.ts'
import { main } from '../core/cli/main.ts'
import { PluginCatalog } from '../core/host/catalog.ts'
import { loadPreset } from '../core/host/preset.ts'
import { planAgent } from '../core/host/resolve.ts'
import { tempDir } from './temp.ts'

const base = {
  agents: {
    support: {
      task: 'What is the refund window?',
      budgets: { maxSteps: 8, maxRepairs: 1 },
      model: { plugin: 'model-scripted', config: { script: [{ final: 'Hello.' }] } },
      plugins: [
        'store-memory',
        'tools-registry',
        'context-basic',
        { plugin: 'verifier-basic', config: { minCount: 0 } },
        {
          plugin: 'policy-rules',
          version: '^1.0.0',
          config: { default: 'deny', rules: [{ id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }] },
        },
        { plugin: 'support-desk', config: { slowLookupTimeoutMs: 1000 } },
      ],
    },
    other: {
      model: 'model-scripted',
      plugins: ['store-memory', 'tools-registry', 'context-basic', 'verifier-basic', 'policy-rules'],
    },
  },
}

function write(dir: string, name: string, value: unknown): string {
  const file = join(dir, name)
  writeFileSync(file, typeof value === 'string' ? value : stringify(value))
  return file
}

function capture() {
  const out: string[] = []
  const err: string[] = []
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err }
}

function refusal(fn: () => unknown): CordageError {
  try {
    fn()
  } catch (error) {
    assert.ok(CordageError.is(error), String(error))
    return error
  }
  assert.fail('expected a CordageError')
}

describe('layered presets', () => {
  it('merges agents by name, maps deeply, plugin entries by name (config deep-merged), and appends new plugins', () => {
    const dir = tempDir()
    write(dir, 'base.yml', base)
    const file = write(dir, 'prod.yml', {
      extends: 'base.yml',
      agents: {
        support: {
          budgets: { maxSteps: 3 },
          plugins: [
            { plugin: 'policy-rules', version: '^2.0.0', onDrift: 'pin', config: { default: 'allow' } },
            { plugin: 'support-desk', remove: true },
            'loop-guard',
          ],
        },
      },
    })
    const preset = loadPreset(file)
    assert.equal(preset.layers.length, 2)
    assert.match(preset.layers[0], /base\.yml$/)
    assert.match(preset.layers[1], /prod\.yml$/)
    const support = preset.agents.support
    assert.deepEqual(support.budgets, { maxSteps: 3, maxRepairs: 1 })
    assert.equal(support.task, 'What is the refund window?')
    const names = support.plugins.map((p) => p.plugin)
    assert.deepEqual(names, ['store-memory', 'tools-registry', 'context-basic', 'verifier-basic', 'policy-rules', 'loop-guard'])
    const policy = support.plugins[4]
    assert.equal(policy.version, '^2.0.0')
    assert.equal(policy.onDrift, 'pin')
    // config deep-merged: default replaced, rules kept from the base
    assert.deepEqual(policy.config, { default: 'allow', rules: [{ id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }] })
    // the other agent comes from the base untouched
    assert.deepEqual(
      preset.agents.other.plugins.map((p) => p.plugin),
      ['store-memory', 'tools-registry', 'context-basic', 'verifier-basic', 'policy-rules'],
    )
  })

  it('follows a chain of three, the nearest layer winning; a list in config is replaced, not merged', () => {
    const dir = tempDir()
    write(dir, 'a.yml', base)
    write(dir, 'b.yml', {
      extends: 'a.yml',
      agents: { support: { budgets: { maxSteps: 5 }, plugins: [{ plugin: 'policy-rules', config: { rules: [] } }] } },
    })
    const file = write(dir, 'c.yml', {
      extends: './b.yml',
      agents: { support: { budgets: { maxSteps: 4 }, plugins: ['policy-rules@^2.0.0'] } },
    })
    const preset = loadPreset(file)
    assert.equal(preset.layers.length, 3)
    assert.equal(preset.agents.support.budgets.maxSteps, 4)
    const policy = preset.agents.support.plugins.find((p) => p.plugin === 'policy-rules')!
    assert.equal(policy.version, '^2.0.0')
    assert.deepEqual(policy.config, { default: 'deny', rules: [] })
  })

  it('resolves a `path` entry against the file that names it, not the file that extends it', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'shared', 'greeter'), { recursive: true })
    cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), join(dir, 'shared', 'greeter'), { recursive: true })
    writeFileSync(join(dir, 'shared', 'greeter', 'package.json'), '{ "type": "module" }\n')
    const withGreeter = structuredClone(base)
    ;(withGreeter.agents.support.plugins as unknown[]).push({ path: 'greeter', config: { greeting: 'Hi' } })
    write(join(dir, 'shared'), 'base.yml', withGreeter)
    mkdirSync(join(dir, 'team'))
    const file = write(join(dir, 'team'), 'desk.yml', {
      extends: '../shared/base.yml',
      agents: { support: { plugins: [{ path: '../shared/greeter', config: { greeting: 'Hello' } }] } },
    })
    const preset = loadPreset(file)
    const greeter = preset.agents.support.plugins.at(-1)!
    assert.equal(greeter.path, join(dir, 'shared', 'greeter'))
    assert.deepEqual(greeter.config, { greeting: 'Hello' })
    const plan = await planAgent(preset, preset.agents.support, await PluginCatalog.scan())
    assert.equal(plan.plugins.find((p) => p.entry.manifest.name === 'greeter')!.entry.manifest.version, '0.3.0')
  })

  it('refuses a cycle, naming the chain', () => {
    const dir = tempDir()
    write(dir, 'a.yml', 'extends: b.yml\nagents: {}\n')
    write(dir, 'b.yml', 'agents: {}\nextends: a.yml\n')
    const error = refusal(() => loadPreset(join(dir, 'a.yml')))
    assert.equal(error.code, 'preset_invalid')
    assert.match(error.message, /b\.yml:2:1 extends: the presets extend each other in a cycle: \S*a\.yml → \S*b\.yml → \S*a\.yml/)
  })

  it('refuses a preset that extends itself, and a base that does not exist, saying where', () => {
    const dir = tempDir()
    write(dir, 'self.yml', 'extends: self.yml\n')
    assert.match(refusal(() => loadPreset(join(dir, 'self.yml'))).message, /cycle: \S*self\.yml → \S*self\.yml/)
    write(dir, 'orphan.yml', 'agents: {}\nextends: nowhere.yml\n')
    const missing = refusal(() => loadPreset(join(dir, 'orphan.yml')))
    assert.equal(missing.code, 'preset_not_found')
    assert.match(missing.message, /orphan\.yml:2:1 extends: the base preset "nowhere\.yml" \(\S*nowhere\.yml\) does not exist/)
    write(dir, 'bad.yml', 'extends: 3\n')
    assert.match(refusal(() => loadPreset(join(dir, 'bad.yml'))).message, /bad\.yml:1:1 extends: expected the file name of a base preset/)
  })

  it('places each problem in the layer that set the key', () => {
    const dir = tempDir()
    write(dir, 'base.yml', 'agents:\n  support:\n    budgets: { maxSteps: -1 }\n    model: model-scripted\n')
    write(dir, 'over.yml', 'extends: base.yml\nagents:\n  support:\n    budgets:\n      maxStep: 3\n')
    const error = refusal(() => loadPreset(join(dir, 'over.yml')))
    assert.equal(error.code, 'preset_invalid')
    assert.match(error.message, /base\.yml:3:16 agents\.support\.budgets\.maxSteps: expected a number ≥ 1, found -1/)
    assert.match(error.message, /over\.yml:5:7 agents\.support\.budgets\.maxStep: unknown key "maxStep"/)
  })

  it('refuses to remove a plugin no earlier layer has', () => {
    const dir = tempDir()
    write(dir, 'base.yml', base)
    write(dir, 'over.yml', { extends: 'base.yml', agents: { support: { plugins: [{ plugin: 'guardrails', remove: true }] } } })
    const error = refusal(() => loadPreset(join(dir, 'over.yml')))
    assert.match(
      error.message,
      /over\.yml:\d+:\d+ agents\.support\.plugins\[0\]: removes plugin "guardrails", which no earlier layer of this agent lists/,
    )
  })
})

describe('--set', () => {
  it('sets dotted paths last, as YAML or JSON values, addressing plugins by name or index', () => {
    const dir = tempDir()
    write(dir, 'base.yml', base)
    const file = write(dir, 'over.yml', { extends: 'base.yml', agents: { support: { budgets: { maxSteps: 3 } } } })
    const preset = loadPreset(file, {
      sets: [
        'agents.support.budgets.maxSteps=4',
        'agents.support.plugins.policy-rules.config.default=allow',
        'agents.support.plugins[0]=store-sqlite@^1.0.0',
        'agents.support.plugins.policy-rules.config.rules=[{"id": "all", "verdict": "allow", "match": {}}]',
        'agents.support.task=Is it 30 days?',
        'agents.other.model.version=^1.0.0',
      ],
    })
    const support = preset.agents.support
    assert.equal(support.budgets.maxSteps, 4)
    assert.equal(support.task, 'Is it 30 days?')
    assert.deepEqual([support.plugins[0].plugin, support.plugins[0].version], ['store-sqlite', '^1.0.0'])
    assert.deepEqual(support.plugins[4].config, { default: 'allow', rules: [{ id: 'all', verdict: 'allow', match: {} }] })
    assert.equal(preset.agents.other.model.version, '^1.0.0')
    assert.deepEqual(preset.sets.length, 6)
  })

  it('checks what --set produced like the file, naming the --set', async () => {
    const dir = tempDir()
    const file = write(dir, 'desk.yml', base)
    const { io, err } = capture()
    assert.equal(await main(['check', '--preset', file, '--set', 'agents.support.budgets.maxSteps=0'], io), 2)
    assert.match(
      err.join('\n'),
      /error \[preset_invalid\]: preset \S+ has 1 problem\(s\):\n {2}--set agents\.support\.budgets\.maxSteps=0 agents\.support\.budgets\.maxSteps: expected a number ≥ 1, found 0/,
    )

    const config = capture()
    assert.equal(
      await main(['check', '--preset', file, '--set', 'agents.support.plugins.policy-rules.config.rules[0].verdict=alow'], config.io),
      2,
    )
    assert.match(
      config.err.join('\n'),
      /error \[plugin_config_invalid\]: --set agents\.support\.plugins\.policy-rules\.config\.rules\[0\]\.verdict=alow agents\.support\.plugins\[4\]\.config\.rules\[0\]\.verdict: plugin policy-rules@1\.0\.0/,
    )

    const unknown = capture()
    assert.equal(await main(['check', '--preset', file, '--set', 'agents.support.plugins.polcy-rules.version=^2'], unknown.io), 2)
    assert.match(
      unknown.err.join('\n'),
      /--set agents\.support\.plugins\.polcy-rules\.version=\^2: agents\.support\.plugins has no entry "polcy-rules"; it has store-memory, tools-registry/,
    )

    const malformed = capture()
    assert.equal(await main(['check', '--preset', file, '--set', 'no-equals-sign'], malformed.io), 2)
    assert.match(malformed.err.join('\n'), /--set no-equals-sign: expected KEY=VALUE/)

    const scalar = capture()
    assert.equal(await main(['check', '--preset', file, '--set', 'agents.support.task.more=1'], scalar.io), 2)
    assert.match(scalar.err.join('\n'), /agents\.support\.task is "What is the refund window\?", not a map/)
  })

  it('changes what a run does, and never writes a preset file', async () => {
    const dir = tempDir()
    const baseFile = write(dir, 'base.yml', base)
    const file = write(dir, 'over.yml', { extends: 'base.yml', agents: { support: { budgets: { maxSteps: 3 } } } })
    const before = [baseFile, file].map((f) => [readFileSync(f, 'utf8'), statSync(f).mtimeMs])
    const { io, out } = capture()
    const code = await main(
      [
        'run',
        '--preset',
        file,
        '--agent',
        'support',
        '--json',
        '--set',
        'agents.support.budgets.maxSteps=1',
        '--set',
        'agents.support.model.config.script=[{"tool": "lookup_policy", "args": {"topic": "refunds"}}]',
      ],
      io,
    )
    assert.equal(code, 4)
    const events = out.map((l) => JSON.parse(l))
    assert.equal(events[0].data.budgets.maxSteps, 1)
    assert.equal(events.at(-1).data.failureCode, 'max_steps')
    assert.deepEqual(
      [baseFile, file].map((f) => [readFileSync(f, 'utf8'), statSync(f).mtimeMs]),
      before,
    )
  })
})
