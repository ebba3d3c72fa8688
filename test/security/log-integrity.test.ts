/**
 * Integrity of the log, through the CLI on store-sqlite: `cordage verify RUN` proves a run's history
 * was not edited after it was written (the hash chain), and the commands that read a run refuse a
 * damaged or edited one with `error [store_corrupt]`, never a stack trace: every load recomputes the
 * links of what it reads, and a snapshot is linked to the chain, so a resume never starts from an
 * edit. Every edit below is made with SQL on the database file, behind the store's back, as someone
 * who can write the file would.
 */
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { stringify } from 'yaml'
import { chainHash, type RunEvent } from 'cordage'
import { main } from '../../core/cli/main.ts'
import { deskPreset, refundAnswer, tempDir, type DeskOptions } from '../helpers.ts'

const savedKey = process.env.CORDAGE_LOG_KEY
after(() => {
  if (savedKey === undefined) delete process.env.CORDAGE_LOG_KEY
  else process.env.CORDAGE_LOG_KEY = savedKey
})

async function cli(args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/** A support desk on store-sqlite in a temp folder: its preset file, database file and outbox. */
function desk(options: Partial<DeskOptions> = {}, store: Record<string, unknown> = {}) {
  const dir = tempDir()
  const file = join(dir, 'preset.yml')
  writeFileSync(
    file,
    stringify(
      deskPreset(
        {
          script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }],
          storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db', ...store } },
          ...options,
        },
        'outbox.jsonl',
      ),
    ),
  )
  return { file, db: join(dir, 'runs.db'), outbox: join(dir, 'outbox.jsonl') }
}

/** A desk whose run waits for the approval of a follow-up (exit 5). */
async function waiting(store: Record<string, unknown> = {}) {
  const d = desk(
    {
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund sent' } }, { final: 'Done.' }],
      verifier: { minCount: 0 },
    },
    store,
  )
  const { code, runId } = await run(d.file)
  assert.equal(code, 5, 'waits for approval')
  return { ...d, runId }
}

/** Each command exits 1 with error [store_corrupt] at `seq` for `problem`, and no stack trace. */
async function refusedByCli(commands: string[][], runId: string, seq: number, problem: RegExp) {
  for (const args of commands) {
    const result = await cli(args)
    assert.equal(result.code, 1, `${args.join(' ')}: ${result.err}`)
    assert.match(result.err, new RegExp(`^error \\[store_corrupt\\]: run ${runId}, seq ${seq}: ${problem.source}`), args.join(' '))
    assert.doesNotMatch(result.err, /internal error|\n\s+at /, args.join(' '))
  }
}

/** Run the desk's task; the run's id and exit code. */
async function run(file: string) {
  const result = await cli(['run', '--preset', file, '--json'])
  const events = result.out.split('\n').map((l) => JSON.parse(l) as RunEvent)
  return { code: result.code, runId: events[0].runId, events }
}

/** SQL on the database file, behind the store's back. */
function sql(db: string, text: string, ...params: unknown[]) {
  const conn = new Database(db)
  try {
    return conn.prepare(text).run(...params)
  } finally {
    conn.close()
  }
}

function rows(db: string, runId: string): { seq: number; body: string; chain: string | null }[] {
  const conn = new Database(db, { readonly: true })
  try {
    return conn
      .prepare('SELECT seq, body, hex(chain) AS chain FROM events WHERE run_id = ? ORDER BY seq')
      .all(runId)
      .map((r) => ({ ...(r as object), chain: (r as { chain: string | null }).chain?.toLowerCase() ?? null })) as never
  } finally {
    conn.close()
  }
}

describe('cordage verify', () => {
  it('passes a fresh run: every event chained, with the head to keep elsewhere', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk()
    const { code, runId, events } = await run(file)
    assert.equal(code, 0)
    const readable = await cli(['verify', runId, '--preset', file])
    assert.equal(readable.code, 0, readable.err)
    assert.match(readable.out, new RegExp(`^run ${runId}: intact: ${events.length} event\\(s\\), numbered 1\\.\\.${events.length}`))
    assert.match(readable.out, /each chained to the one before \(SHA-256, no key/)
    const head = rows(db, runId).at(-1)!.chain!
    assert.match(readable.out, new RegExp(`head ${head}$`))
    const json = await cli(['verify', runId, '--preset', file, '--json'])
    assert.deepEqual(JSON.parse(json.out), {
      runId,
      events: events.length,
      chained: true,
      keyed: false,
      head,
      agent: 'support',
      intact: true,
    })
  })

  it('fails after an edit that is still valid JSON: who approved a follow-up', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk({
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund sent' } }, { final: 'Done.' }],
      verifier: { minCount: 0 },
    })
    const { code, runId } = await run(file)
    assert.equal(code, 5, 'waits for approval')
    assert.equal((await cli(['approve', runId, 's1.a1', '--preset', file, '--by', 'alice'])).code, 0)
    assert.equal((await cli(['verify', runId, '--preset', file])).code, 0)
    const decided = rows(db, runId).find((r) => JSON.parse(r.body).type === 'tool/approval-decided')!
    assert.match(decided.body, /"by":"alice"/)
    sql(db, `UPDATE events SET body = replace(body, '"by":"alice"', '"by":"mallory"') WHERE run_id = ? AND seq = ?`, runId, decided.seq)
    // The edit is a valid event at its seq: only the chain tells, and every read recomputes it.
    await refusedByCli(
      [
        ['events', runId, '--preset', file],
        ['events', runId, '--after', String(decided.seq - 1), '--preset', file],
      ],
      runId,
      decided.seq,
      /its chain hash does not match its body/,
    )
    const result = await cli(['verify', runId, '--preset', file])
    assert.equal(result.code, 1)
    assert.match(result.out, new RegExp(`NOT INTACT at seq ${decided.seq}: its chain hash does not match`))
    assert.match(result.err, new RegExp(`^error \\[store_corrupt\\]: run ${runId}, seq ${decided.seq}: `))
    const json = await cli(['verify', runId, '--preset', file, '--json'])
    assert.equal(json.code, 1)
    assert.deepEqual([JSON.parse(json.out).intact, JSON.parse(json.out).firstBad.seq], [false, decided.seq])
  })

  it('fails after a deleted row and after a renumbered row, naming the seq', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk()
    const deleted = (await run(file)).runId
    const renumbered = (await run(file)).runId
    sql(db, 'DELETE FROM events WHERE run_id = ? AND seq = 7', deleted)
    sql(db, 'UPDATE events SET seq = seq + 100 WHERE run_id = ? AND seq = 9', renumbered)
    const one = await cli(['verify', deleted, '--preset', file])
    assert.equal(one.code, 1)
    assert.match(one.out, /NOT INTACT at seq 7: the event at seq 7 is missing: the next stored event is seq 8/)
    const two = await cli(['verify', renumbered, '--preset', file])
    assert.equal(two.code, 1)
    assert.match(two.out, /NOT INTACT at seq 9: the event at seq 9 is missing: the next stored event is seq 10/)
  })

  it('with a key, fails after an edit whose chain was recomputed without the key; without one, such an edit only changes the head', async () => {
    process.env.CORDAGE_LOG_KEY = 'a-log-key-kept-outside-the-database'
    try {
      const keyed = desk()
      const { runId } = await run(keyed.file)
      const intact = await cli(['verify', runId, '--preset', keyed.file])
      assert.equal(intact.code, 0, intact.err)
      assert.match(intact.out, /under the key \(HMAC-SHA-256\)/)
      rechainWithoutKey(keyed.db, runId)
      const result = await cli(['verify', runId, '--preset', keyed.file])
      assert.equal(result.code, 1)
      assert.match(result.out, /NOT INTACT at seq 1: its chain hash does not match its body and the chain before it under the key/)
      assert.match(result.err, /error \[store_corrupt\]/)
      await refusedByCli(
        [['events', runId, '--preset', keyed.file]],
        runId,
        1,
        /its chain hash does not match its body and the chain before it under the key/,
      )
    } finally {
      delete process.env.CORDAGE_LOG_KEY
    }
    // The same edit on a store without a key passes: anyone who can write the database can chain
    // again. What is left is the head, which changed (an anchor kept elsewhere shows it).
    const plain = desk()
    const { runId } = await run(plain.file)
    const before = JSON.parse((await cli(['verify', runId, '--preset', plain.file, '--json'])).out).head
    rechainWithoutKey(plain.db, runId)
    const after = await cli(['verify', runId, '--preset', plain.file, '--json'])
    assert.equal(after.code, 0)
    assert.notEqual(JSON.parse(after.out).head, before)
    assert.equal((await cli(['events', runId, '--preset', plain.file])).code, 0, 'and it reads: without a key, only the head shows it')
  })

  it('says NOT CHAINED for a run without links (stored before chaining, or blanked), never intact and chained', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk()
    const { runId, events } = await run(file)
    sql(db, 'UPDATE events SET chain = NULL WHERE run_id = ?', runId)
    const result = await cli(['verify', runId, '--preset', file])
    assert.equal(result.code, 0, 'nothing is damaged')
    assert.match(
      result.out,
      new RegExp(`^run ${runId}: NOT CHAINED: .*\n  not chained up to seq ${events.length}: .*nothing proves they were not edited`),
    )
    assert.doesNotMatch(result.out, /intact|head/)
    const json = JSON.parse((await cli(['verify', runId, '--preset', file, '--json'])).out)
    assert.deepEqual([json.chained, json.unchainedUpTo, json.head, json.firstBad], [true, events.length, undefined, undefined])
  })

  it('is a usage error without a run, or for a run the stores do not have', async () => {
    const { file } = desk()
    assert.equal((await cli(['verify', '--preset', file])).code, 2)
    const missing = await cli(['verify', 'run_nope', '--preset', file])
    assert.equal(missing.code, 2)
    assert.match(missing.err, /^error \[run_not_found\]: no run run_nope/)
  })
})

describe('a damaged run read by the CLI', () => {
  it('events and resume say error [store_corrupt] with the run and seq, exit 1, and print no stack trace', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk({
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'x' } }, { final: 'Done.' }],
      verifier: { minCount: 0 },
    })
    const { code, runId } = await run(file)
    assert.equal(code, 5)
    sql(db, `UPDATE events SET body = '{"type": "tool/decision", ' WHERE run_id = ? AND seq = 4`, runId)
    for (const args of [
      ['events', runId],
      ['events', runId, '--after', '2'],
      ['resume', runId],
      ['approve', runId, 's1.a1'],
    ]) {
      const result = await cli([...args, '--preset', file])
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.err}`)
      assert.match(
        result.err,
        new RegExp(`^error \\[store_corrupt\\]: run ${runId}, seq 4: its stored body is not valid JSON`),
        args.join(' '),
      )
      assert.doesNotMatch(result.err, /internal error|\n\s+at /, args.join(' '))
    }
  })
})

describe('a resume of an edited run', () => {
  it('approve and resume refuse a run whose events were edited (still valid JSON), and do nothing', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db, outbox, runId } = await waiting()
    const requested = rows(db, runId).find((r) => JSON.parse(r.body).type === 'tool/approval-requested')!
    assert.match(requested.body, /"note":"refund sent"/)
    // The follow-up waiting for approval now says something else.
    sql(
      db,
      `UPDATE events SET body = replace(body, '"note":"refund sent"', '"note":"refund sent twice"') WHERE run_id = ? AND seq = ?`,
      runId,
      requested.seq,
    )
    await refusedByCli(
      [
        ['approve', runId, 's1.a1', '--preset', file, '--by', 'alice'],
        ['resume', runId, '--preset', file],
      ],
      runId,
      requested.seq,
      /its chain hash does not match its body/,
    )
    assert.equal(existsSync(outbox), false, 'no follow-up was written')
    const status = await cli(['events', runId, '--preset', file])
    assert.equal(status.code, 1, 'the run is left as it was, for a restore')
  })

  it('resume refuses a run whose snapshot of state was edited, or lost its link', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db, outbox, runId } = await waiting({ snapshotEvery: 1 })
    const snap = new Database(db, { readonly: true })
    const kept = snap.prepare('SELECT seq, state FROM snapshots WHERE run_id = ?').get(runId) as { seq: number; state: string }
    snap.close()
    assert.ok(kept, 'a snapshot was kept')
    const state = JSON.parse(kept.state) as { steps: number }
    sql(db, 'UPDATE snapshots SET state = ? WHERE run_id = ?', JSON.stringify({ ...state, steps: state.steps + 1 }), runId)
    // events too: it finds the run's agent from its state.
    await refusedByCli(
      [
        ['resume', runId, '--preset', file],
        ['approve', runId, 's1.a1', '--preset', file, '--by', 'alice'],
        ['events', runId, '--preset', file],
      ],
      runId,
      kept.seq,
      /the snapshot of run state taken at seq \d+ does not match its link/,
    )
    assert.equal(existsSync(outbox), false, 'no follow-up was written')
    const verify = await cli(['verify', runId, '--preset', file])
    assert.equal(verify.code, 1)
    assert.match(
      verify.out,
      new RegExp(`NOT INTACT at seq ${kept.seq}: the snapshot of run state taken at seq ${kept.seq} does not match its link`),
    )
    sql(db, 'UPDATE snapshots SET state = ?, chain = NULL WHERE run_id = ?', kept.state, runId)
    await refusedByCli([['resume', runId, '--preset', file]], runId, kept.seq, /the snapshot of run state taken at seq \d+ has no link/)
  })
})

describe('cordage worker and a damaged run', () => {
  it('reports the damaged run, passes it over, and drives the runs queued behind it', async () => {
    delete process.env.CORDAGE_LOG_KEY
    const { file, db } = desk()
    const first = await cli(['submit', '--preset', file, '--json'])
    const second = await cli(['submit', '--preset', file, '--json'])
    assert.equal(first.code, 0, first.err)
    const [damaged, healthy] = [first, second].map((r) => JSON.parse(r.out.split('\n')[0]).runId as string)
    sql(db, "UPDATE events SET body = 'not json' WHERE run_id = ? AND seq = 1", damaged)
    const worker = await cli(['worker', '--once', '--preset', file])
    assert.equal(worker.code, 0, worker.err)
    assert.match(worker.err, new RegExp(`error \\[store_corrupt\\]: run ${damaged}, seq 1`))
    assert.match(worker.err, new RegExp(`run ${healthy} COMPLETED`))
    assert.doesNotMatch(worker.err, /\n\s+at /)
  })
})

/** Edit seq 2's body and chain every event again with plain SHA-256, as someone without the key would. */
function rechainWithoutKey(db: string, runId: string) {
  const conn = new Database(db)
  try {
    let link = ''
    for (const row of conn.prepare('SELECT seq, body FROM events WHERE run_id = ? ORDER BY seq').all(runId) as {
      seq: number
      body: string
    }[]) {
      const body = row.seq === 2 ? row.body.replace('"turn/start"', '"turn/start","edited":true') : row.body
      link = chainHash(link, body)
      conn.prepare('UPDATE events SET body = ?, chain = ? WHERE run_id = ? AND seq = ?').run(body, Buffer.from(link, 'hex'), runId, row.seq)
    }
  } finally {
    conn.close()
  }
}
