/**
 * Every text a tool produces passes the guardrail and the scrub before it is recorded (issues 29 and
 * 30): its result (also under an observation of its own), its error message, its preview (recorded
 * with an approval request, or a dry run's output) and a failed preview's message. Driven as an
 * attacker would meet it: tools that put a card number in each of those texts (the fixture
 * card-leak-desk), the guardrails plugin, runs started and approved through a real playground HTTP
 * server over SQLite, and everything the playground, `cordage events` and `cordage effects` then
 * show. A guardrail that fails or overruns on any of those texts withholds it (fail closed).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../../playground/server.ts'
import { bearer } from '../playground-helpers.ts'
import { supportDesk, tempDir } from '../helpers.ts'
import { Card } from '../fixtures/plugins/card-leak-desk/index.ts'
import { cordageBin as bin } from '../bin.ts'

const fixture = resolve(import.meta.dirname, '../fixtures/plugins/card-leak-desk')
/** The card in any spacing a text could carry it in. */
const AnyCard = new RegExp(Card.replaceAll(' ', '[ -]?'))
const Rules = [
  { id: 'reads', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'charges', verdict: 'allow', match: { tool: 'charge_card' } },
  { id: 'refunds', verdict: 'ask', match: { tool: 'refund_card' } },
]
const call = (tool: string, args: Record<string, unknown>) => ({ tool, args: { customerId: 'C-7', amount: 20, ...args } })
const done = { final: 'Done.' }
/** One agent per path a tool's text takes into the record. */
const Scripts = {
  dryrun: [call('charge_card', { dry_run: true }), done],
  'dryrun-fails': [call('charge_card', { mode: 'preview-fails', dry_run: true }), done],
  declined: [call('charge_card', { mode: 'decline' }), done],
  charged: [call('charge_card', {}), done],
  large: [call('charge_card', { mode: 'large' }), done],
  approval: [call('refund_card', {}), done],
}
type AgentName = keyof typeof Scripts

function presetFile(guardrail: unknown = 'guardrails'): string {
  const dir = tempDir('cordage-tool-texts-')
  const agent = (script: unknown[]) => ({
    task: 'Charge the customer.',
    budgets: { maxSteps: 6 },
    model: { plugin: 'model-scripted', config: { script } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      { plugin: 'policy-rules', config: { default: 'deny', approvers: ['*'], rules: Rules } },
      guardrail,
      // The large result is kept apart as an artifact: the guardrail must have screened all of it first.
      'artifacts',
      { path: fixture },
      'previews',
    ],
  })
  const agents = Object.fromEntries(Object.entries(Scripts).map(([name, script]) => [name, agent(script)]))
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify({ cordage: 1, agents }))
  return file
}

const ofType = <K extends RunEvent['type']>(events: RunEvent[], type: K) => events.filter((e) => e.type === type) as RunEvent<K>[]

/** Fails naming where the card is and what is around it (not the whole text, which can be long). */
function noCard(text: string, where: string): void {
  const found = AnyCard.exec(text)
  if (found) assert.fail(`${where} shows the card: …${text.slice(Math.max(0, found.index - 160), found.index + 40)}…`)
}

describe('every text a tool produces passes the guardrail, as the playground serves it', () => {
  let playground: Playground
  let preset: string
  const errors: unknown[] = []
  const runs = new Map<AgentName, string>()
  /** What the playground's approval card is given while the refund waits (GET /api/runs/RUN `pending`). */
  let approvalCard: any

  const api = async (path: string, body?: unknown) => {
    const response = await fetch(playground.origin + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { ...bearer(playground), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    assert.ok(response.status < 300, `${path}: ${response.status} ${text}`)
    return { text, body: JSON.parse(text) }
  }
  /** Poll the run until it stops driving in `status` (no timing is asserted: the test's own timeout bounds it). */
  const until = async (runId: string, status: string) => {
    for (;;) {
      const { body } = await api(`/api/runs/${runId}`)
      if (body.status === status && !body.drivenHere) return body
      assert.ok(
        !['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED'].includes(body.status) || body.status === status,
        JSON.stringify(body),
      )
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const start = async (agent: AgentName) => {
    const { body } = await api('/api/runs', { agent })
    runs.set(agent, body.runId)
    return body.runId as string
  }
  const events = async (runId: string) => (await api(`/api/runs/${runId}/events`)).body.events as RunEvent[]
  /** Every view of a run the playground serves: the run, its events, its trace, each step's detail, its artifacts. */
  const served = async (runId: string) => {
    const texts = [`/api/runs/${runId}`, `/api/runs/${runId}/events`, `/api/runs/${runId}/trace`, `/api/runs/${runId}/artifacts`]
    const out: string[] = []
    for (const path of texts) out.push((await api(path)).text)
    const steps = new Set((await events(runId)).flatMap((e) => (e.stepId ? [e.stepId] : [])))
    for (const step of steps) out.push((await api(`/api/runs/${runId}/steps/${step}`)).text)
    return out.join('\n')
  }

  before(async () => {
    preset = presetFile()
    playground = await startPlayground({ preset, port: 0, onError: (e) => errors.push(e) })
    for (const agent of ['dryrun', 'dryrun-fails', 'declined', 'charged', 'large'] as const) await until(await start(agent), 'COMPLETED')
    const paused = await until(await start('approval'), 'WAITING_APPROVAL')
    approvalCard = paused.pending
    await api(`/api/runs/${paused.runId}/approve`, { actionId: 's1.a1', by: 'alice' })
    await until(paused.runId, 'COMPLETED')
  })
  after(async () => {
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  it("a dry run's tool/end carries its preview as the guardrail let it through, marked dryRun and redacted (issue 29)", async () => {
    const runId = runs.get('dryrun')!
    const end = ofType(await events(runId), 'tool/end')[0]
    assert.equal(end.data.dryRun, true)
    assert.deepEqual(end.data.redacted, { guard: 'card' }, 'the redaction is marked, as for a result')
    const output = end.data.output as { summary: string; record: { card: string }; diff: string }
    assert.equal(output.summary, 'charge 20 EUR to card [redacted:card]')
    assert.equal(output.record.card, '[redacted:card]')
    assert.match(output.diff, /^\+C-7: card \[redacted:card\], 20 EUR$/m)
    assert.match(end.data.observation, /^Dry run, nothing was done\. charge 20 EUR to card \[redacted:card\]/)
    const trip = ofType(await events(runId), 'guard/tripped')
    assert.deepEqual(
      trip.map((t) => [t.data.stage, t.data.action, t.data.guard]),
      [['tool_output', 'redact', 'card']],
      'one look at the preview: its output and the observation rendered from it agree',
    )
    // The trace view and the step's detail say it was a dry run, and show the preview as recorded.
    const span = (await api(`/api/runs/${runId}/trace`)).body.spans.find((x: { id: string }) => x.id === 's1.a1')
    assert.deepEqual([span.dryRun, span.label], [true, 'charge_card s1.a1 (dry run)'])
    const [action] = (await api(`/api/runs/${runId}/steps/s1`)).body.actions
    assert.equal(action.dryRun, true)
    assert.deepEqual(action.preview.output, output)
    assert.deepEqual(action.preview.redacted, { guard: 'card' })
    noCard(await served(runId), 'the playground')
  })

  it("a failed dry run's tool/error is marked dryRun and its message redacted", async () => {
    const runId = runs.get('dryrun-fails')!
    const error = ofType(await events(runId), 'tool/error')[0]
    assert.equal(error.data.dryRun, true)
    assert.equal(error.data.code, 'tool_failed')
    assert.match(error.data.message, /charge_card's preview failed: card \[redacted:card\] is unknown to the bank/)
    assert.match(error.data.observation, /The dry run of charge_card failed \(tool_failed\): .*card \[redacted:card\]/)
    assert.deepEqual(error.data.redacted, { guard: 'card' })
    noCard(await served(runId), 'the playground')
  })

  it("a tool's error message is redacted in tool/error, its stack too, as its observation is (issue 30)", async () => {
    const runId = runs.get('declined')!
    const error = ofType(await events(runId), 'tool/error')[0]
    assert.equal(error.data.code, 'tool_failed')
    assert.equal(error.data.message, 'card [redacted:card] was declined')
    assert.equal(error.data.observation, 'charge_card failed (tool_failed): card [redacted:card] was declined')
    assert.deepEqual(error.data.redacted, { guard: 'card' })
    assert.match(error.data.stack ?? '', /^Error: card \[redacted:card\] was declined\n\s+at /, 'the stack keeps its frames')
    assert.equal(error.data.dryRun, undefined, 'a real call is not marked as a dry run')
    const [action] = (await api(`/api/runs/${runId}/steps/s1`)).body.actions
    assert.deepEqual(action.attempts[0].error.redacted, { guard: 'card' })
    noCard(await served(runId), 'the playground')
  })

  it("a result is redacted even where the tool's own observation does not show it, in the event and the ledger", async () => {
    const runId = runs.get('charged')!
    const end = ofType(await events(runId), 'tool/end')[0]
    assert.equal(end.data.observation, 'charge_card done for C-7: 20 EUR.')
    assert.deepEqual(end.data.output, { customerId: 'C-7', amount: 20, card: '[redacted:card]' })
    assert.deepEqual(end.data.redacted, { guard: 'card' })
    assert.equal(end.data.dryRun, undefined)
    noCard(await served(runId), 'the playground')
  })

  it('a large result is screened whole: its artifact holds the card redacted, far past what the observation shows', async () => {
    const runId = runs.get('large')!
    const end = ofType(await events(runId), 'tool/end')[0]
    assert.ok(end.data.artifact, 'stored as an artifact')
    assert.equal(end.data.artifact.visibility, 'ui')
    assert.deepEqual(end.data.redacted, { guard: 'card' })
    assert.doesNotMatch(end.data.observation, /redacted/, "the card is far past the observation's head")
    const { body } = await api(`/api/runs/${runId}/artifacts`)
    assert.deepEqual(
      body.artifacts.map((a: { ref: string }) => a.ref),
      [end.data.artifact.ref],
    )
    const size = end.data.artifact.bytes
    const last = (await api(`/api/artifacts/${end.data.artifact.ref}?offset=${size - 100}&length=100`)).text
    assert.match(last, /charged card \[redacted:card\]/)
    noCard(last, 'the artifact')
  })

  it('a preview recorded with an approval request is redacted and says so, and the approval card shows it so', async () => {
    const runId = runs.get('approval')!
    const request = ofType(await events(runId), 'tool/approval-requested')[0]
    const preview = request.data.preview
    assert.ok(preview?.status === 'ok', JSON.stringify(preview))
    assert.equal(preview.preview.summary, 'charge 20 EUR to card [redacted:card]')
    assert.deepEqual(preview.preview.record, { customerId: 'C-7', card: '[redacted:card]', amount: 20 })
    assert.deepEqual(preview.redacted, { guard: 'card' })
    assert.deepEqual(approvalCard.preview, preview, 'the card shows the request as recorded')
    noCard(JSON.stringify(approvalCard), 'the approval card')
    noCard(await served(runId), 'the playground')
  })

  it('the store holds no card: not in the SQLite file, nor in what cordage events and cordage effects print', () => {
    const dir = dirname(preset)
    for (const file of ['runs.db', 'runs.db-wal'].map((f) => join(dir, f)).filter(existsSync))
      noCard(readFileSync(file).toString('latin1'), file)
    // The readable lines of the declined call's events; the ledger entries of the charge, whole.
    for (const [agent, command, ...flags] of [
      ['declined', 'events'],
      ['charged', 'effects', '--json'],
    ] as const) {
      const result = spawnSync(process.execPath, [bin, command, runs.get(agent)!, ...flags, '--preset', preset], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      })
      assert.equal(result.status, 0, `cordage ${command}: ${result.stderr}`)
      assert.match(result.stdout, /\[redacted:card\]/, `cordage ${command} shows what the guardrail let through`)
      noCard(result.stdout + result.stderr, `cordage ${command}`)
    }
  })
})

describe("what a tool's reconcile reports passes the guardrail too", () => {
  it('a charge that timed out and was settled by asking the bank: tool/reconciled and the ledger hold the card redacted', async () => {
    const h = await supportDesk({
      script: [{ tool: 'charge_by_phone', args: { customerId: 'C-7' } }, done] as never,
      rules: [{ id: 'phone', verdict: 'allow', match: { tool: 'charge_by_phone' } }],
      verifier: { minCount: 0 },
      plugins: ['guardrails', { path: fixture }],
    })
    try {
      const state = await h.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await h.events(state.runId)
      const [reconciled] = ofType(events, 'tool/reconciled')
      assert.deepEqual(
        [reconciled.data.committed, reconciled.data.output, reconciled.data.redacted],
        [true, { charged: true, card: '[redacted:card]' }, { guard: 'card' }],
      )
      const effect = await h.agent.store().effect(`${state.runId}/s1.a1`)
      assert.deepEqual(effect?.output, { charged: true, card: '[redacted:card]' })
      noCard(JSON.stringify(events), 'the events')
    } finally {
      await h.stop()
    }
  })
})

describe('a guardrail that fails on a tool text withholds it (fail closed)', () => {
  const rogue = (mode: string) => ({ path: resolve(import.meta.dirname, '../fixtures/plugins/rogue-guardrail'), config: { mode } })
  const desk = (script: unknown[], mode: string, serviceTimeouts?: Record<string, number>) =>
    supportDesk({
      script: script as never,
      rules: Rules,
      verifier: { minCount: 0 },
      plugins: [rogue(mode), { path: fixture }],
      serviceTimeouts,
    })

  for (const [name, script] of [
    ['a dry run', Scripts.dryrun],
    ['a failed dry run', Scripts['dryrun-fails']],
    ['an error message', Scripts.declined],
    ['a result under its own observation', Scripts.charged],
    ['a large result', Scripts.large],
    ['a preview before an approval', Scripts.approval],
  ] as const) {
    it(`${name}: a guardrail that throws at tool_output withholds the text`, async () => {
      const h = await desk([...script], 'output-throws')
      try {
        const state = await h.agent.run()
        const events = await h.events(state.runId)
        const trips = ofType(events, 'guard/tripped')
        assert.ok(trips.length >= 1, 'the failure is recorded as a trip')
        assert.ok(trips.every((t) => t.data.action === 'block' && t.data.guard === 'guardrail-error'))
        assert.match(
          JSON.stringify(events),
          /The (result|error message|preview) of (charge|refund)_card was withheld by guardrail guardrail-error: guardrail rogue-guardrail@1\.0\.0 failed, blocked to fail closed: the detector crashed\./,
          'a notice stands where the text was',
        )
        noCard(JSON.stringify(events), 'the events')
      } finally {
        await h.stop()
      }
    })
  }

  it('a guardrail that never answers on a preview ends the run service_timeout, and the preview is not recorded raw', async () => {
    const h = await desk([...Scripts.dryrun], 'output-hangs', { guardrail: 100 })
    try {
      const state = await h.agent.run()
      assert.deepEqual([state.status, state.failureCode], ['FAILED', 'service_timeout'])
      const events = await h.events(state.runId)
      // Nothing ran, so nothing waits to be recorded: the run ends at once, and the dry run with it.
      const [error] = ofType(events, 'tool/error')
      assert.deepEqual([error.actionId, error.data.code, error.data.dryRun], ['s1.a1', 'service_timeout', true])
      assert.equal(ofType(events, 'tool/end').length, 0)
      noCard(JSON.stringify(events), 'the events')
    } finally {
      await h.stop()
    }
  })
})
