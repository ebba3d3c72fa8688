/**
 * `cordage run --model PLUGIN[@RANGE]` (core/cli/model-flag.ts): a preset runs on another model plugin
 * without an edit, configured by `--set model.config.KEY=VALUE`, and run/start records the override.
 * A value that names no installed model plugin, or a range none satisfies, is refused with the list of
 * installed model plugins. The real CLI runs as a child process.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { deskPreset, refundAnswer, tempDir, type DeskOptions } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

function presetDir(options: DeskOptions): string {
  const dir = tempDir('cordage-run-model-')
  writeFileSync(join(dir, 'preset.yml'), stringify(deskPreset(options, 'outbox.jsonl')))
  return dir
}

function events(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
}

/** A preset whose model is a server nobody runs: it can only work with --model. */
const openAiPreset: DeskOptions = {
  script: [],
  modelPlugin: { plugin: 'model-openai', config: { model: 'gpt-test', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'NO_SUCH_KEY' } },
}

describe('cordage run --model', () => {
  it('runs the preset on another model plugin, configured by --set model.config..., and run/start records it', () => {
    const dir = presetDir(openAiPreset)
    const script = JSON.stringify([{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }])
    const { code, stdout, stderr } = cordage(
      ['run', '--preset', 'preset.yml', '--json', '--model', 'model-scripted@^1', '--set', `model.config.script=${script}`],
      dir,
    )
    assert.equal(code, 0, stderr)
    const all = events(stdout)
    const start = all.find((e) => e.type === 'run/start')!
    assert.ok(start.type === 'run/start')
    assert.equal(start.data.plugins['model-scripted'], '1.2.0')
    assert.equal(start.data.plugins['model-openai'], undefined)
    assert.deepEqual(start.data.overrides, { model: 'model-scripted@1.2.0' })
    assert.equal(start.data.services.model, 'model-scripted@1.2.0')
    const end = all.at(-1)!
    assert.ok(end.type === 'run/end')
    assert.equal(end.data.answer, refundAnswer)
  })

  it("keeps the preset's model config when --model names the same plugin; a run without --model records no override", () => {
    const dir = presetDir({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    const same = cordage(['run', '--preset', 'preset.yml', '--json', '--model', 'model-scripted@1.x'], dir)
    assert.equal(same.code, 0, same.stderr)
    const all = events(same.stdout)
    const start = all.find((e) => e.type === 'run/start')!
    assert.ok(start.type === 'run/start')
    assert.deepEqual(start.data.overrides, { model: 'model-scripted@1.2.0' })
    const end = all.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.answer === refundAnswer)

    const plain = cordage(['run', '--preset', 'preset.yml', '--json'], dir)
    assert.equal(plain.code, 0, plain.stderr)
    const plainStart = events(plain.stdout).find((e) => e.type === 'run/start')!
    assert.ok(plainStart.type === 'run/start')
    assert.equal('overrides' in plainStart.data, false)
  })

  it('does not carry the config of the preset model to another plugin', () => {
    // model-scripted's config (script) given to model-openai would not fit its schema; it is dropped,
    // so model-openai is asked for what it needs (its model name) instead.
    const dir = presetDir({ script: [{ final: refundAnswer }] })
    const { code, stderr } = cordage(['run', '--preset', 'preset.yml', '--model', 'model-openai'], dir)
    assert.equal(code, 2, stderr)
    assert.match(
      stderr,
      /error \[plugin_config_invalid\]: --model model-openai agents\.support\.model\.config\.model: plugin model-openai@1\.1\.0: missing required value/,
    )
    assert.doesNotMatch(stderr, /script/)
  })

  it('refuses an unknown plugin, a plugin that is no model, a range nothing satisfies and a malformed value, listing the model plugins', () => {
    const dir = presetDir({ script: [{ final: refundAnswer }] })
    const installed = /installed model plugins: model-anthropic@[\d.]+, model-openai@[\d.]+, model-scripted@1\.2\.0/
    const cases: [string[], RegExp, RegExp | undefined][] = [
      [
        ['--model', 'model-scriptd'],
        /error \[plugin_not_found\]: --model model-scriptd: no model plugin named "model-scriptd" is installed \(did you mean "model-scripted"\?\)/,
        installed,
      ],
      [
        ['--model', 'store-memory'],
        /error \[plugin_not_found\]: --model store-memory: "store-memory" is installed but provides no model \(it provides store\)/,
        installed,
      ],
      [
        ['--model', 'model-scripted@^9'],
        /error \[plugin_version_unsatisfiable\]: --model model-scripted@\^9: no installed version of "model-scripted" satisfies \^9/,
        installed,
      ],
      [['--model', 'model-scripted@one'], /error \[invalid_input\]: --model model-scripted@one: "one" is not a semver range/, undefined],
      [['--model', 'Model Scripted'], /error \[invalid_input\]: --model "Model Scripted": expected PLUGIN or PLUGIN@RANGE/, undefined],
      [
        ['--set', 'model.config.script=[]'],
        /error \[invalid_input\]: --set model\.config\.script=\[\]: a "model\." key sets the model that --model names; add --model PLUGIN/,
        undefined,
      ],
    ]
    for (const [args, message, list] of cases) {
      const { code, stdout, stderr } = cordage(['run', '--preset', 'preset.yml', ...args], dir)
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
      assert.equal(stdout, '', args.join(' '))
      assert.match(stderr, message)
      if (list) assert.match(stderr, list)
    }
  })
})
