/**
 * An evaluation never reaches a real side effect, and never records an approval nobody gave
 * (docs/concepts/security.md, "Evaluation and replays"). The world: a billing agent whose `charge_card`
 * (test/fixtures/plugins/charge-desk) appends one line per call to a file outside every Cordage folder
 * (not the preset's folder, not a case's scratch copy), the payment system. One run is recorded: the
 * charge asks, alice approves it, the card is charged once. Then that run is replayed: by `cordage eval`
 * under two variants (the real binary), and by the playground's side-by-side replay (its HTTP API).
 * Whatever the replay does, the payment system still holds one charge.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../../playground/server.ts'
import type { SuiteResult } from '../../core/eval/result.ts'
import { cordage } from '../cordage-process.ts'
import { tempDir } from '../temp.ts'
import { bearer, readSse } from '../playground-helpers.ts'

const root = resolve(import.meta.dirname, '../..')
const chargeDesk = join(root, 'test/fixtures/plugins/charge-desk')
const charge = { customer: 'c-1', cents: 1200 }

/** The billing preset in a folder of its own; charges go to `ledger`, outside it. */
function billingPreset(ledger: string, policy?: unknown): string {
  const dir = tempDir('cordage-replay-preset-')
  const file = join(dir, 'preset.yml')
  writeFileSync(
    file,
    stringify({
      cordage: 1,
      agents: {
        billing: {
          task: 'Charge customer c-1 12.00 for the repair.',
          budgets: { maxSteps: 6, maxRepairs: 0 },
          model: {
            plugin: 'model-scripted',
            config: { script: [{ tool: 'charge_card', args: charge }, { final: 'Charged 12.00 to c-1 [source: charge/ch_1].' }] },
          },
          plugins: [
            { plugin: 'store-sqlite', config: { path: 'runs.db' } },
            'tools-registry',
            'context-basic',
            'verifier-basic',
            policy ?? {
              plugin: 'policy-rules',
              version: '^2.0.0',
              config: {
                default: 'deny',
                approvers: ['*'],
                rules: [
                  { id: 'reads', verdict: 'allow', match: { sideEffect: 'none' } },
                  { id: 'charges-need-approval', verdict: 'ask', match: { tool: 'charge_card' }, reason: 'a charge moves money' },
                ],
              },
            },
            { path: chargeDesk, config: { ledger } },
          ],
        },
      },
    }),
  )
  return file
}

/** The payment system's own record: one line per call of charge_card, whoever made it. */
function charges(ledger: string): { id: string; runId: string }[] {
  return existsSync(ledger)
    ? readFileSync(ledger, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : []
}

const lines = (text: string): RunEvent[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))

describe('cordage eval replays a recorded run without reaching its real effect', () => {
  const bank = tempDir('cordage-bank-')
  const ledger = join(bank, 'charges.jsonl')
  const preset = billingPreset(ledger)
  const work = tempDir('cordage-replay-work-')
  let recorded: RunEvent[] = []
  /** Scratch folders `--keep` left, removed after the tests. */
  const kept: string[] = []
  after(() => {
    for (const k of kept) rmSync(k, { recursive: true, force: true })
  })

  before(async () => {
    // The recorded run: the charge asks, alice approves it in another process, the card is charged once.
    const started = await cordage(['run', '--preset', preset, '--json'], work)
    assert.equal(started.code, 5, started.err)
    const runId = lines(started.out)[0].runId
    const approved = await cordage(['approve', runId, 's1.a1', '--by', 'alice', '--preset', preset, '--json'], work)
    assert.equal(approved.code, 0, approved.err + approved.out)
    const events = await cordage(['events', runId, '--preset', preset, '--json'], work)
    recorded = lines(events.out)
    assert.equal(charges(ledger).length, 1)
  })

  const suite = (cases: Record<string, Record<string, unknown>>): string => {
    const dir = tempDir('cordage-replay-suite-')
    for (const [name, c] of Object.entries(cases))
      writeFileSync(join(dir, `${name}.yml`), stringify({ eval: 1, preset, agent: 'billing', ...c }))
    return dir
  }

  it('a variant replay that would approve and charge again is refused before it runs: nothing is charged', async () => {
    // As such a replay was written before: the recorded decisions, alice's approval given again by the engine.
    const dir = suite({ 'approve-again': { answers: [{ approve: true, by: 'alice' }], expect: { status: 'COMPLETED' } } })
    const r = await cordage(['eval', dir, '--vary', 'maxSteps=4,6', '--json'], work)
    assert.equal(charges(ledger).length, 1, 'the payment system holds the recorded charge only')
    assert.equal(r.code, 1, r.err)
    const result: SuiteResult = JSON.parse(r.out)
    assert.equal(result.runs.length, 3, 'full, maxSteps=4 and maxSteps=6')
    for (const run of result.runs) {
      assert.equal(run.error?.code, 'replay_refused', JSON.stringify(run))
      assert.match(run.error!.message, /charge_card/)
      assert.match(run.error!.message, /recorded:|sandbox:/, 'the message says how to fix the case')
    }
  })

  it('answers the write from the recorded result and replays the recorded approval as such; other arguments, or a sandbox that leaves the case, are refused', async () => {
    const end = recorded.find((e) => e.type === 'tool/end')
    assert.ok(end?.type === 'tool/end')
    const theCall = {
      tool: 'charge_card',
      args: charge,
      approved: { by: 'alice' },
      result: { output: end.data.output, observation: end.data.observation, receipt: end.data.receipt },
    }
    const dir = suite({
      'from-recording': {
        recorded: [theCall],
        expect: { status: 'COMPLETED', events: { count: { 'tool/end[charge_card]': 1, 'tool/approval-decided[charge_card]': 1 } } },
      },
      'other-arguments': {
        recorded: [{ ...theCall, args: { customer: 'c-1', cents: 9900 } }],
        expect: { status: 'COMPLETED' },
      },
      'named-approvers': {
        // The policy lets only alice decide: her recorded approval, given again as replay:alice, is not hers to give.
        overlay: { plugins: [{ plugin: 'policy-rules', config: { approvers: ['alice'] } }] },
        recorded: [theCall],
        expect: { status: 'WAITING_APPROVAL', events: { excludes: ['tool/start[charge_card]'] } },
      },
      'sandbox-outside': {
        sandbox: ['charge_card'],
        answers: [{ approve: true }],
        expect: { status: 'COMPLETED' },
      },
    })
    const r = await cordage(['eval', dir, '--vary', 'maxSteps=6', '--keep', '--json'], work)
    const result: SuiteResult = JSON.parse(r.out)
    kept.push(...result.runs.flatMap((x) => (x.notes ?? []).filter((n) => n.startsWith('scratch folder kept: ')).map((n) => n.slice(21))))
    assert.equal(charges(ledger).length, 1, 'still the recorded charge only')
    assert.equal(r.code, 1, r.err)

    const runs = (name: string) => result.runs.filter((x) => x.case === name)
    for (const name of ['from-recording', 'other-arguments', 'named-approvers', 'sandbox-outside'])
      assert.equal(runs(name).length, 2, `${name} ran under full and maxSteps=6`)
    for (const run of runs('from-recording')) {
      assert.equal(run.ok, true, JSON.stringify(run))
      assert.equal(run.status, 'COMPLETED')
      assert.ok(
        run.notes?.some((n) => /alice's recorded approval of s1\.a1 \(charge_card\) replayed as replay:alice/.test(n)),
        JSON.stringify(run.notes),
      )
      assert.ok(
        run.notes?.some((n) => /charge_card s1\.a1: answered from the recorded result, not run/.test(n)),
        JSON.stringify(run.notes),
      )
    }
    // What the replay's own store says (read through the front door from a kept scratch folder): the
    // approval is the recording's, replayed, and the result is marked as the recording's.
    const replayed = runs('from-recording')[0]
    const folder = replayed.notes!.find((n) => n.startsWith('scratch folder kept: '))!.slice(21)
    const shown = await cordage(['events', replayed.runId!, '--preset', join(folder, 'preset/.eval-variant-0.yml'), '--json'], work)
    assert.equal(shown.code, 0, shown.err)
    const events = lines(shown.out)
    const decided = events.filter((e) => e.type === 'tool/approval-decided')
    assert.deepEqual(
      decided.map((e) => e.type === 'tool/approval-decided' && [e.data.approved, e.data.by]),
      [[true, 'replay:alice']],
    )
    assert.match(String(decided[0].data.reason), /recorded approval by alice/)
    const ended = events.find((e) => e.type === 'tool/end' && e.data.tool === 'charge_card')
    assert.ok(ended?.type === 'tool/end')
    assert.deepEqual(ended.data.output, end.data.output)
    assert.ok((ended.data.receipt as { replayed?: unknown } | undefined)?.replayed, JSON.stringify(ended.data.receipt))

    for (const run of runs('other-arguments')) {
      assert.equal(run.error?.code, 'replay_refused', JSON.stringify(run))
      assert.match(
        run.error!.message,
        /charge_card\(\{"customer":"c-1","cents":1200\}\) \(call 1 of the script\), and the recorded results of charge_card are for \{"customer":"c-1","cents":9900\}/,
      )
    }
    for (const run of runs('named-approvers')) {
      assert.equal(run.ok, true, JSON.stringify(run))
      assert.ok(
        run.notes?.some((n) =>
          /alice's recorded approval of s1\.a1 \(charge_card\) was not replayed: .*\(alice\).*name replay:alice among the rule's approvers/.test(
            n,
          ),
        ),
        JSON.stringify(run.notes),
      )
    }
    for (const run of runs('sandbox-outside')) {
      assert.equal(run.error?.code, 'replay_refused', JSON.stringify(run))
      assert.match(run.error!.message, /charges\.jsonl/)
      assert.match(run.error!.message, /outside the case's folder/)
    }
  })
})

describe('what a case declares about effects is checked before it runs', () => {
  const bank = tempDir('cordage-bank-')
  const ledger = join(bank, 'charges.jsonl')
  const preset = billingPreset(ledger)
  const work = tempDir('cordage-replay-work-')
  const suite = (cases: Record<string, Record<string, unknown>>): string => {
    const dir = tempDir('cordage-replay-suite-')
    for (const [name, c] of Object.entries(cases))
      writeFileSync(join(dir, `${name}.yml`), stringify({ eval: 1, preset, agent: 'billing', expect: { status: 'COMPLETED' }, ...c }))
    return dir
  }

  it('a model that is not scripted may call anything: every tool with side effects needs a sandbox or a recording; names must be tools', async () => {
    // model-scripted reading its script from a file is not a script the engine reads: taken as a live model.
    writeFileSync(join(dirname(preset), 'script.yml'), stringify([{ tool: 'charge_card', args: charge }, { final: 'done' }]))
    const dir = suite({
      unscripted: {
        overlay: { model: { plugin: 'model-scripted', config: { script: [], file: 'script.yml' } } },
        answers: [{ approve: true }],
      },
      'sandbox-misspelt': { sandbox: ['charge_cards'] },
      'sandbox-a-read': { sandbox: ['lookup_customer'] },
      'recorded-unknown': { recorded: [{ tool: 'refund_card', args: charge, result: { output: 1 } }] },
    })
    const r = await cordage(['eval', dir, '--json'], work)
    assert.equal(r.code, 1, r.err)
    assert.equal(charges(ledger).length, 0, 'nothing reached the payment system')
    const error = (name: string) => JSON.parse(r.out).runs.find((x: { case: string }) => x.case === name).error
    assert.equal(error('unscripted').code, 'replay_refused')
    assert.match(error('unscripted').message, /not scripted, so it may call any of its tools, and charge_card \(external\)/)
    assert.deepEqual(error('sandbox-misspelt'), {
      code: 'invalid_input',
      message: `${error('sandbox-misspelt').message.split(':')[0]}: sandbox names charge_cards, a tool no agent of the preset has (agent "billing" has charge_card, lookup_customer)`,
    })
    assert.match(error('sandbox-a-read').message, /sandbox names lookup_customer, which changes nothing \(sideEffect none\)/)
    assert.match(error('recorded-unknown').message, /recorded\[0\] is a call of refund_card, a tool no agent of the preset has/)
  })

  it('a recorded call with both decisions, or with nothing, is refused when the suite loads', async () => {
    const dir = suite({
      both: { recorded: [{ tool: 'charge_card', args: charge, approved: { by: 'alice' }, rejected: { by: 'bob' } }] },
      nothing: { recorded: [{ tool: 'charge_card', args: charge }] },
    })
    const r = await cordage(['eval', dir], work)
    assert.equal(r.code, 2, r.err)
    assert.match(r.err, /both\.yml:\d+ recorded\[0\]: a recorded call was approved or rejected, not both/)
    assert.match(r.err, /nothing\.yml:\d+ recorded\[0\]: a recorded call needs its decision \(approved, rejected\), its result, or both/)
  })
})

describe("the playground's side-by-side replay never repeats a recorded write", () => {
  const bank = tempDir('cordage-bank-')
  const ledger = join(bank, 'charges.jsonl')
  const preset = billingPreset(ledger)
  let playground: Playground
  const errors: unknown[] = []
  const auth = () => bearer(playground)
  const post = async (path: string, body: unknown) => {
    const response = await fetch(playground.origin + path, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as any }
  }
  const until = (runId: string, type: string, after = 0) =>
    readSse(`${playground.origin}/api/runs/${runId}/stream?after=${after}`, auth(), (f) => f.data?.type === type || f.event === 'end')

  before(async () => {
    playground = await startPlayground({ preset, port: 0, cwd: tempDir(), onError: (e) => errors.push(e) })
  })
  after(async () => {
    await playground.close()
    assert.deepEqual(errors, [])
  })

  /** A billing run, paused on its charge and then decided by a person through the API. */
  async function recordedRun(approve: boolean, by: string): Promise<string> {
    const started = await post('/api/runs', { agent: 'billing' })
    assert.equal(started.status, 202, JSON.stringify(started.body))
    const { runId } = started.body
    await until(runId, 'run/paused')
    const decided = await post(`/api/runs/${runId}/${approve ? 'approve' : 'reject'}`, { by })
    assert.equal(decided.status, 202, JSON.stringify(decided.body))
    await until(runId, 'run/end')
    return runId
  }

  it('answers the approved charge from the recording on both sides, with alice’s approval replayed, never given again', async () => {
    const runId = await recordedRun(true, 'alice')
    assert.equal(charges(ledger).length, 1)
    const { status, body } = await post('/api/compare', {
      runId,
      plugin: 'policy-rules',
      a: { version: '2.1.0' },
      b: { version: '^1.0.0' },
    })
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(charges(ledger).length, 1, 'neither side charged the card again')
    for (const side of [body.a, body.b]) {
      assert.equal(side.outcome?.status, 'COMPLETED', JSON.stringify(side))
      const decided = side.events.filter((e: any) => e.type === 'tool/approval-decided')
      assert.deepEqual(
        decided.map((e: any) => [e.data.approved, e.data.by]),
        [[true, 'replay:alice']],
        'the approval is alice’s recorded one, replayed; no new approval by anybody',
      )
      assert.ok(!side.events.some((e: any) => e.data?.by === 'alice'), 'nothing is recorded as given by alice')
      const ended = side.events.find((e: any) => e.type === 'tool/end' && e.data.tool === 'charge_card')
      assert.ok(ended?.data.receipt?.replayed, JSON.stringify(ended))
      assert.ok(!side.replayed.some((r: string) => / as alice$/.test(r)), JSON.stringify(side.replayed))
      assert.ok(
        side.replayed.some((r: string) => /alice's recorded approval of s1\.a1 \(charge_card\) replayed as replay:alice/.test(r)),
        JSON.stringify(side.replayed),
      )
    }
  })

  it('refuses, never runs, a charge the recording never made that a side’s policy would let through', async () => {
    const before = charges(ledger).length
    const runId = await recordedRun(false, 'bob')
    assert.equal(charges(ledger).length, before, 'rejected: nothing charged')
    const allowAll = { default: 'allow', rules: [] }
    const { status, body } = await post('/api/compare', {
      runId,
      plugin: 'policy-rules',
      a: { version: '2.1.0' },
      b: { version: '2.1.0', config: allowAll },
    })
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(charges(ledger).length, before, 'the side that would charge did not reach the payment system')
    assert.equal(body.b.outcome?.status, 'FAILED', JSON.stringify(body.b))
    assert.equal(body.b.outcome.failureCode, 'replay_refused')
    const refused = body.b.events.find((e: any) => e.type === 'tool/error' && e.data.tool === 'charge_card')
    assert.equal(refused?.data.code, 'replay_refused', JSON.stringify(body.b.events.map((e: any) => e.type)))
    assert.ok(!body.b.events.some((e: any) => e.type === 'tool/approval-decided'), 'nobody approved anything on side b')
    // Side a asks as the recording did: bob's recorded rejection is replayed as such.
    const decided = body.a.events.filter((e: any) => e.type === 'tool/approval-decided')
    assert.deepEqual(
      decided.map((e: any) => [e.data.approved, e.data.by]),
      [[false, 'replay:bob']],
    )
  })
})
