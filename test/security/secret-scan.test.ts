/**
 * `cordage scan` searches a preset's stores for its agents' secrets. Runs scrub secrets before they
 * are recorded, so the secrets here are written into the SQLite file with SQL, as a store written
 * before scrubbing (or by something else) would hold them: chained again, as the store would have
 * chained what it wrote (a read refuses an edit the chain does not hold). A finding names where it is
 * and the secret's name and form, never the value.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { stringify } from 'yaml'
import { chainHash, type RunEvent } from 'cordage'
import { main } from '../../core/cli/main.ts'
import { deskPreset, tempDir } from '../helpers.ts'

const token = 'desk-token-0c5e2f9a71b4'
const saved = { DESK_TOKEN: process.env.DESK_TOKEN, CORDAGE_LOG_KEY: process.env.CORDAGE_LOG_KEY }
delete process.env.CORDAGE_LOG_KEY
after(() => {
  for (const [name, value] of Object.entries(saved))
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
})

async function cli(args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/** A desk on store-sqlite whose preset lists DESK_TOKEN as a secret, with one completed run that wrote a follow-up. */
async function deskWithRun() {
  process.env.DESK_TOKEN = token
  const dir = tempDir()
  const file = join(dir, 'preset.yml')
  writeFileSync(
    file,
    stringify(
      deskPreset(
        {
          secrets: ['DESK_TOKEN'],
          script: [
            { tool: 'record_followup', args: { ticketId: 'T-7', note: `customer called; their token is ${token}` } },
            { final: 'Done.' },
          ],
          rules: [{ id: 'all', verdict: 'allow', match: {} }],
          verifier: { minCount: 0 },
          storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } },
        },
        'outbox.jsonl',
      ),
    ),
  )
  const started = await cli(['run', '--preset', file, '--json', '--task', `Note the call (token ${token})`])
  assert.equal(started.code, 0, started.err)
  const events = started.out.split('\n').map((l) => JSON.parse(l) as RunEvent)
  return { file, db: join(dir, 'runs.db'), runId: events[0].runId, events }
}

function sql(db: string, text: string, ...params: unknown[]) {
  const conn = new Database(db)
  try {
    conn.prepare(text).run(...params)
  } finally {
    conn.close()
  }
}

/** Every link of the run computed again from its bodies (SHA-256: these tests set no chain key), as the store would have written them. */
function rechain(db: string, runId: string) {
  const conn = new Database(db)
  try {
    let link = ''
    for (const row of conn.prepare('SELECT seq, body FROM events WHERE run_id = ? ORDER BY seq').all(runId) as {
      seq: number
      body: string
    }[]) {
      link = chainHash(link, row.body)
      conn.prepare('UPDATE events SET chain = ? WHERE run_id = ? AND seq = ?').run(Buffer.from(link, 'hex'), runId, row.seq)
    }
  } finally {
    conn.close()
  }
}

describe('cordage scan', () => {
  it('finds nothing in runs that scrubbed their secrets as they were recorded (exit 0)', async () => {
    const { file, events } = await deskWithRun()
    assert.ok(!JSON.stringify(events).includes(token), 'the run recorded no secret')
    assert.match(JSON.stringify(events), /\[redacted:DESK_TOKEN\]/)
    const result = await cli(['scan', '--preset', file])
    assert.equal(result.code, 0, result.err)
    assert.equal(result.out, '')
    assert.match(
      result.err,
      /scanned 1 run\(s\) \(\d+ events, 0 snapshot\(s\), 1 ledger entry, 0 artifact\(s\)\) and 0 grant\(s\) .* for 1 secret\(s\): DESK_TOKEN; none found/,
    )
  })

  it('finds a secret written into the store before scrubbing: run, seq, JSON path, name and form, never the value (exit 1)', async () => {
    const { file, db, runId, events } = await deskWithRun()
    const end = events.find((e) => e.type === 'tool/end')!
    const start = events.find((e) => e.type === 'run/start')!
    // As a store written before scrubbing would hold them: as written, and base64 in another event.
    sql(
      db,
      'UPDATE events SET body = ? WHERE run_id = ? AND seq = ?',
      JSON.stringify({ ...end, data: { ...end.data, observation: `Follow-up FU-1 recorded; token ${token}` } }),
      runId,
      end.seq,
    )
    sql(
      db,
      'UPDATE events SET body = ? WHERE run_id = ? AND seq = ?',
      JSON.stringify({
        ...start,
        data: { ...start.data, task: `Authorization: Basic ${Buffer.from(`desk:${token}`).toString('base64')}` },
      }),
      runId,
      start.seq,
    )
    sql(db, 'UPDATE effects SET output = ? WHERE run_id = ?', JSON.stringify({ receipt: 'FU-1', echoed: { [token]: true } }), runId)
    rechain(db, runId)

    const result = await cli(['scan', '--preset', file])
    assert.equal(result.code, 1, result.err)
    assert.deepEqual(
      result.out.split('\n').sort(),
      [
        `run ${runId} ledger ${runId}/s1.a1 $.output.echoed{key}: DESK_TOKEN (as written)`,
        `run ${runId} seq 1 run/start $.data.task: DESK_TOKEN (base64 (offset 2))`,
        `run ${runId} seq ${end.seq} tool/end $.data.observation: DESK_TOKEN (as written)`,
      ].sort(),
    )
    assert.match(result.err, /3 finding\(s\)/)
    assert.ok(!result.out.includes(token) && !result.err.includes(token), 'the value is never printed')

    const json = await cli(['scan', '--preset', file, '--json'])
    assert.equal(json.code, 1)
    const findings = json.out.split('\n').map((l) => JSON.parse(l))
    assert.deepEqual(
      findings.find((f) => f.in === 'event' && f.seq === end.seq),
      { runId, in: 'event', seq: end.seq, type: 'tool/end', path: '$.data.observation', secret: 'DESK_TOKEN', form: 'as written' },
    )
    assert.deepEqual(
      findings.find((f) => f.in === 'ledger'),
      { runId, in: 'ledger', key: `${runId}/s1.a1`, path: '$.output.echoed{key}', secret: 'DESK_TOKEN', form: 'as written' },
    )
  })

  it('reports a run it cannot read as not searched (exit 1)', async () => {
    const { file, db, runId } = await deskWithRun()
    sql(db, "UPDATE events SET body = 'not json' WHERE run_id = ? AND seq = 3", runId)
    const result = await cli(['scan', '--preset', file])
    assert.equal(result.code, 1)
    assert.match(
      result.err,
      new RegExp(`run ${runId} could not be read, so it was not searched: error \\[store_corrupt\\]: run ${runId}, seq 3`),
    )
    assert.match(result.err, /none found; 1 run\(s\) could not be read/)
  })

  it('is a usage error when there is no secret to look for (exit 2)', async () => {
    const { file } = await deskWithRun()
    delete process.env.DESK_TOKEN
    const result = await cli(['scan', '--preset', file])
    assert.equal(result.code, 2)
    assert.match(result.err, /error \[invalid_input\]: no secrets to look for/)
  })
})
