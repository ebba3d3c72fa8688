/**
 * `cordage effects RUN`, through the real binary: a run's side effects counted from outside, from the
 * ledger of a durable store, in readable lines and in JSON; an unknown run is a usage error.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { Effect } from 'cordage'
import { deskPreset, tempDir } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe('cordage effects', () => {
  const dir = tempDir('cordage-effects-')
  const preset = join(dir, 'desk.yml')
  let writer = '',
    reader = ''

  before(() => {
    writeFileSync(
      preset,
      stringify(
        deskPreset(
          {
            script: [
              { tool: 'lookup_policy', args: { topic: 'refunds' } },
              { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Call the customer back.' } },
              { final: 'Recorded the follow-up.' },
            ],
            rules: [
              { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
              { id: 'followups', verdict: 'allow', match: { tool: 'record_followup' } },
            ],
            verifier: { minCount: 0 },
            storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } },
          },
          join(dir, 'outbox.jsonl'),
        ),
      ),
    )
    const run = cordage(['run', '--preset', preset, '--json'], dir)
    assert.equal(run.code, 0, run.stderr)
    writer = JSON.parse(run.stdout.split('\n')[0]).runId
    const read = cordage(
      ['run', '--preset', preset, '--json', '--set', 'agents.support.model.config.script=[{final: "Nothing to do."}]'],
      dir,
    )
    assert.equal(read.code, 0, read.stderr)
    reader = JSON.parse(read.stdout.split('\n')[0]).runId
  })

  it('lists the one committed write of a run, not its read, and counts it on stderr', () => {
    const { code, stdout, stderr } = cordage(['effects', writer, '--preset', preset], dir)
    assert.equal(code, 0, stderr)
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 1, stdout)
    assert.match(
      lines[0],
      new RegExp(
        `^${writer}/s2\\.a1  committed +s2\\.a1  record_followup  attempts 1  started \\S+Z  ended \\S+Z \\(\\d+ ms\\)  receipt \\S+  "Follow-up \\S+ recorded on T-1001\\."$`,
      ),
    )
    assert.equal(stderr.trim(), `run ${writer}: 1 ledger entry: 1 committed`)
  })

  it('prints one JSON object per entry with --json, as the store holds it', () => {
    const { code, stdout, stderr } = cordage(['effects', writer, '--preset', preset, '--json'], dir)
    assert.equal(code, 0, stderr)
    const entries = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Effect)
    assert.equal(entries.length, 1)
    const [entry] = entries
    assert.deepEqual(
      [entry.key, entry.runId, entry.actionId, entry.tool, entry.status, entry.attempts],
      [`${writer}/s2.a1`, writer, 's2.a1', 'record_followup', 'committed', 1],
    )
    assert.ok(typeof entry.receipt === 'string' && entry.observation?.includes(entry.receipt), entry.observation)
    assert.ok(entry.endedAt! >= entry.startedAt)
    assert.match(entry.argsHash, /^sha256:/)
    assert.equal(entries.filter((e) => e.status === 'committed').length, 1)
  })

  it('says a run without writes has no ledger entries, and exits 0', () => {
    const { code, stdout, stderr } = cordage(['effects', reader, '--preset', preset, '--json'], dir)
    assert.equal(code, 0, stderr)
    assert.equal(stdout, '')
    assert.equal(stderr.trim(), `run ${reader}: no ledger entries (no call with side effects started)`)
  })

  it('names the dry runs of a run on stderr: they are not in the ledger, nothing was done', () => {
    const charges = join(dir, 'charges.yml')
    const charge = (customerId: string, extra: object = {}) => ({ tool: 'charge_card', args: { customerId, amount: 5, ...extra } })
    writeFileSync(
      charges,
      stringify(
        deskPreset(
          {
            script: [{ calls: [charge('C-1', { dry_run: true }), charge('C-2')] }, { final: 'Charged C-2.' }],
            rules: [{ id: 'charges', verdict: 'allow', match: { tool: 'charge_card' } }],
            verifier: { minCount: 0 },
            storePlugin: { plugin: 'store-sqlite', config: { path: 'charges.db' } },
            plugins: [{ path: resolve(import.meta.dirname, 'fixtures/plugins/card-leak-desk') }],
          },
          join(dir, 'outbox.jsonl'),
        ),
      ),
    )
    const run = cordage(['run', '--preset', charges, '--json'], dir)
    assert.equal(run.code, 0, run.stderr)
    const runId = JSON.parse(run.stdout.split('\n')[0]).runId
    const { code, stdout, stderr } = cordage(['effects', runId, '--preset', charges], dir)
    assert.equal(code, 0, stderr)
    assert.deepEqual(
      stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).slice(1, 4)),
      [['committed', 's1.a2', 'charge_card']],
      'only the real charge is in the ledger',
    )
    assert.equal(
      stderr.trim(),
      `run ${runId}: 1 ledger entry: 1 committed; 1 dry run (s1.a1 charge_card) not in the ledger: only a preview ran, nothing was done`,
    )
  })

  it('answers an unknown run with run_not_found, exit 2, and nothing on stdout', () => {
    const { code, stdout, stderr } = cordage(['effects', 'run_nope', '--preset', preset], dir)
    assert.equal(code, 2)
    assert.equal(stdout, '')
    assert.match(stderr, /^error \[run_not_found\]: .*run_nope/m)
  })

  it('answers a missing RUN with invalid_input, exit 2', () => {
    const { code, stderr } = cordage(['effects', '--preset', preset], dir)
    assert.equal(code, 2)
    assert.match(
      stderr,
      /^error \[invalid_input\]: "effects" takes RUN, got none; usage: cordage effects RUN \[--preset FILE\] \[--json\]/m,
    )
  })
})
