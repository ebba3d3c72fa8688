/**
 * A run that accepted changed plugin files (`--accept-drift`), across real processes: resumed on the
 * same accepted files it is not refused again; resumed on the files it started with, the change back
 * is a drift too, and is recorded as a decision.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { refundAnswer, tempDir } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
const jsonEvents = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))

describe('resume after an accepted drift of plugin files', () => {
  const rules = [
    { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
    { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
  ]
  function writePreset(dir: string, policy: Record<string, unknown>, extra: unknown[] = []): void {
    writeFileSync(
      join(dir, 'desk.yml'),
      stringify({
        agents: {
          support: {
            task: 'Refund T-1001 and tell me the window',
            model: {
              plugin: 'model-scripted',
              config: {
                script: [
                  { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'first' } },
                  { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'second' } },
                  { tool: 'lookup_policy', args: { topic: 'refunds' } },
                  { final: refundAnswer },
                ],
              },
            },
            plugins: [
              { plugin: 'store-sqlite', config: { path: 'runs.db' } },
              'tools-registry',
              'context-basic',
              'verifier-basic',
              { plugin: 'policy-rules', config: { default: 'deny', rules }, ...policy },
              { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
              ...extra,
            ],
          },
        },
      }),
    )
  }

  it('a run that accepted changed plugin files, resumed again on the files it started with, records a drift decision (it last ran the edited ones)', () => {
    const dir = tempDir()
    const greeter = join(dir, 'greeter')
    cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), greeter, { recursive: true })
    writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
    const original = readFileSync(join(greeter, 'index.ts'), 'utf8')
    writePreset(dir, { version: '^1.0.0' }, [{ path: 'greeter' }])
    const started = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(started.code, 5, started.stderr)
    const runId = jsonEvents(started.stdout)[0].runId
    // Edit the plugin, and accept the drift: the run goes on under the edited files and pauses again.
    writeFileSync(join(greeter, 'index.ts'), original + '\n// edited after the run started\n')
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 5, accepted.stderr)
    // Put the original files back: the run's code changes again (edited → original); that must be a decision.
    writeFileSync(join(greeter, 'index.ts'), original)
    const back = cordage(['approve', runId, 's2.a1', '--preset', 'desk.yml'], dir)
    const read = cordage(['events', runId, '--preset', 'desk.yml', '--json'], dir)
    const drifts = jsonEvents(read.stdout)
      .filter((e) => e.type === 'run/version-drift')
      .map((e) => e.data as any)
    assert.equal(
      drifts.length,
      2,
      `the switch back to the original greeter files went unrecorded (approve exit ${back.code}); drift events: ${JSON.stringify(drifts)}`,
    )
  })

  it('a run that accepted changed plugin files is not refused again for the same, already accepted, files', () => {
    const dir = tempDir()
    const greeter = join(dir, 'greeter')
    cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), greeter, { recursive: true })
    writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
    writePreset(dir, { version: '^1.0.0' }, [{ path: 'greeter' }])
    const started = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(started.code, 5, started.stderr)
    const runId = jsonEvents(started.stdout)[0].runId
    appendFileSync(join(greeter, 'index.ts'), '\n// edited after the run started\n')
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 5, accepted.stderr)
    // Nothing changed since the accepted resume; the run already runs these files.
    const again = cordage(['approve', runId, 's2.a1', '--preset', 'desk.yml'], dir)
    assert.equal(again.code, 0, `refused again for the drift it already accepted: ${again.stderr}`)
  })
})
