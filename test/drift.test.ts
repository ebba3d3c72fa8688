/**
 * Resuming a run under other plugin versions (or other plugin files at the same version), across real
 * processes: refused by default and recorded; accepted or pinned per plugin (`onDrift`) or with
 * --accept-drift; the decision is run/version-drift, and a pinned run really runs the recorded version.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { pluginHash } from '../core/host/plugin-hash.ts'
import { refundAnswer, tempDir } from './helpers.ts'
import { cordageBin as bin, root, suiteDist } from './bin.ts'

const greeterFixture = resolve(import.meta.dirname, 'fixtures/plugins/greeter')

/** A built-in plugin's folder as the `cordage` the tests run has it (compiled in the suite's build), for its hash. */
const builtin = (name: string) => join(suiteDist ?? root, 'plugins', name)

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const rules = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
]

/** Step 1 asks (a follow-up), step 2 is decided by policy after the resume, step 3 answers. */
function writePreset(dir: string, policy: Record<string, unknown>, extra: unknown[] = []): string {
  const file = join(dir, 'desk.yml')
  writeFileSync(
    file,
    stringify({
      agents: {
        support: {
          task: 'Refund T-1001 and tell me the window',
          model: {
            plugin: 'model-scripted',
            config: {
              script: [
                { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved.' } },
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
  return file
}

/** A run paused for approval under policy-rules 1.0.0; returns its id. */
function pausedRun(dir: string, extra: unknown[] = []): string {
  writePreset(dir, { version: '^1.0.0' }, extra)
  const started = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
  assert.equal(started.code, 5, started.stderr)
  const events = jsonEvents(started.stdout)
  assert.ok(events[0].type === 'run/start')
  assert.equal(events[0].data.plugins['policy-rules'], '1.0.0')
  return events[0].runId
}

function jsonEvents(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

function storedEvents(dir: string, runId: string): RunEvent[] {
  const read = cordage(['events', runId, '--preset', 'desk.yml', '--json'], dir)
  assert.equal(read.code, 0, read.stderr)
  return jsonEvents(read.stdout)
}

function driftOf(events: RunEvent[]) {
  const drift = events.filter((e) => e.type === 'run/version-drift')
  return drift.map((e) => (e as RunEvent<'run/version-drift'>).data)
}

function policyProducers(events: RunEvent[]): string[] {
  return events.filter((e) => e.type === 'tool/decision').map((e) => e.producer)
}

describe('resume under drift', () => {
  it('refuses by default, records the refusal, and leaves the run waiting', () => {
    const dir = tempDir()
    const runId = pausedRun(dir)
    writePreset(dir, { version: '^2.0.0' })
    const refused = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml'], dir)
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /error \[version_drift\]: run \S+ started with other plugin versions \(policy-rules 1\.0\.0 → 2\.1\.0\)/)
    const events = storedEvents(dir, runId)
    const [drift] = driftOf(events)
    assert.equal(drift.decision, 'refused')
    assert.deepEqual(
      drift.changes.map((c) => [c.plugin, c.from, c.to, c.decision]),
      [['policy-rules', '1.0.0', '2.1.0', 'refused']],
    )
    assert.equal(events.at(-1)!.type, 'run/version-drift')
  })

  it('accepts per plugin with onDrift: accept, and the run goes on under the new version', () => {
    const dir = tempDir()
    const runId = pausedRun(dir)
    writePreset(dir, { version: '^2.0.0', onDrift: 'accept' })
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(accepted.code, 0, accepted.stderr)
    const events = storedEvents(dir, runId)
    const [drift] = driftOf(events)
    assert.equal(drift.decision, 'accepted')
    assert.equal(drift.changes[0].decision, 'accepted')
    const producers = policyProducers(events)
    assert.equal(producers[0], 'policy-rules@1.0.0')
    assert.equal(producers.at(-1), 'policy-rules@2.1.0')
  })

  it('pins with onDrift: pin: the recorded 1.0.0 is loaded for this run while the preset names ^2.0.0', () => {
    const dir = tempDir()
    const runId = pausedRun(dir)
    writePreset(dir, { version: '^2.0.0', onDrift: 'pin' })
    const pinned = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(pinned.code, 0, pinned.stderr)
    const events = storedEvents(dir, runId)
    const [drift] = driftOf(events)
    assert.equal(drift.decision, 'pinned')
    assert.deepEqual(
      drift.changes.map((c) => [c.plugin, c.from, c.to, c.decision]),
      [['policy-rules', '1.0.0', '2.1.0', 'pinned']],
    )
    assert.equal(drift.changes[0].fromHash, pluginHash(builtin('policy-rules-v1')))
    assert.equal(drift.changes[0].toHash, pluginHash(builtin('policy-rules')))
    // Every policy decision of the run, before and after the resume, came from 1.0.0.
    const producers = policyProducers(events)
    assert.ok(producers.length >= 2, producers.join())
    for (const producer of producers) assert.equal(producer, 'policy-rules@1.0.0')
    const end = events.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED', JSON.stringify(end))
    // A new run of the same preset gets 2.0.0: the pin was for that run only.
    const fresh = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
    const start = jsonEvents(fresh.stdout)[0]
    assert.ok(start.type === 'run/start' && start.data.plugins['policy-rules'] === '2.1.0')
  })

  it('--accept-drift overrides onDrift: refuse, given to the same approve the refusal named', () => {
    const dir = tempDir()
    const runId = pausedRun(dir)
    writePreset(dir, { version: '^2.0.0', onDrift: 'refuse' })
    const refused = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml'], dir)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /give the same command again with --accept-drift/)
    assert.ok(!storedEvents(dir, runId).some((e) => e.type === 'tool/approval-decided'), 'the refused approve recorded no approval')
    // The policy's version changed with the drift: the approval was given under 1.0.0, so the action
    // is decided again under 2.0.0 (docs/concepts/durability.md). That preset names no approvers, and 2.x denies
    // an ask nobody may answer: the approval is void and the write never runs.
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 0, accepted.stderr)
    const events = storedEvents(dir, runId)
    assert.deepEqual(
      driftOf(events).map((d) => d.decision),
      ['refused', 'accepted'],
    )
    assert.equal(events.filter((e) => e.type === 'tool/approval-decided').length, 1)
    const decisions = events.filter((e): e is RunEvent<'tool/decision'> => e.type === 'tool/decision' && e.actionId === 's1.a1')
    assert.deepEqual(
      decisions.map((d) => [d.producer, d.data.verdict]),
      [
        ['policy-rules@1.0.0', 'ask'],
        ['policy-rules@2.1.0', 'deny'],
      ],
    )
    assert.equal(events.filter((e) => e.type === 'tool/start' && e.data.tool === 'record_followup').length, 0)
  })

  it('counts changed files at the same version as drift, with both hashes, and cannot pin them', () => {
    const dir = tempDir()
    const greeter = join(dir, 'greeter')
    cpSync(greeterFixture, greeter, { recursive: true })
    writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
    const runId = pausedRun(dir, [{ path: 'greeter', onDrift: 'pin' }])
    const before = pluginHash(greeter)
    const start = storedEvents(dir, runId)[0]
    assert.ok(start.type === 'run/start')
    assert.equal(start.data.hashes?.greeter, before)
    assert.equal(start.data.hashes?.['policy-rules'], pluginHash(builtin('policy-rules-v1')))

    appendFileSync(join(greeter, 'index.ts'), '\n// edited after the run started\n')
    const after = pluginHash(greeter)
    assert.notEqual(after, before)
    const refused = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml'], dir)
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(
      refused.stderr,
      /greeter 0\.3\.0 \(sha256:[0-9a-f]{12}\) → 0\.3\.0 \(sha256:[0-9a-f]{12}\) \[cannot pin: greeter@0\.3\.0 with content sha256:[0-9a-f]+ is not installed here\]/,
    )
    const [drift] = driftOf(storedEvents(dir, runId))
    assert.deepEqual(drift.changes, [
      {
        plugin: 'greeter',
        from: '0.3.0',
        to: '0.3.0',
        fromHash: before,
        toHash: after,
        decision: 'refused',
        note: `cannot pin: greeter@0.3.0 with content ${before} is not installed here`,
      },
    ])

    // The refusal recorded no approval: the same approve, with --accept-drift, goes through.
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 0, accepted.stderr)
    assert.equal(JSON.parse(readFileSync(join(dir, 'outbox.jsonl'), 'utf8').trim().split('\n')[0]).ticketId, 'T-1001')
  })

  it('does not check runs whose plugins did not change', () => {
    const dir = tempDir()
    const runId = pausedRun(dir)
    const resumed = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml'], dir)
    assert.equal(resumed.code, 0, resumed.stderr)
    assert.deepEqual(driftOf(storedEvents(dir, runId)), [])
  })
})
