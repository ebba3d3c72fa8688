/**
 * Secrets stay out of the record (issue 10, finding 8): a model server that echoes its API key in a
 * completion, in tool arguments and in an error body, and a tool that prints a token the preset marks
 * secret. Nothing of either reaches an event, a ledger row or the SQLite file, in any letter case or
 * common encoding; the model's next context sees `[redacted:NAME]`.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { Scrubber, type RunEvent } from 'cordage'
import { adapterDesk, Adapters, TestKey, TestKeyEnv, type AdapterDesk } from '../servers/adapter-desk.ts'

let desk: AdapterDesk | undefined
afterEach(async () => {
  await desk?.close()
  desk = undefined
})

const forms = (secret: string) => [
  secret,
  secret.toUpperCase(),
  Buffer.from(secret).toString('base64'),
  Buffer.from(`Bearer ${secret}`).toString('base64'),
  encodeURIComponent(secret),
  Buffer.from(secret).toString('hex'),
]

describe('secrets are scrubbed from everything a run records', () => {
  for (const adapter of Adapters) {
    it(`${adapter.plugin}: a key the server echoes in an error, tool arguments and the answer is in no event and no byte of the store`, async () => {
      desk = await adapterDesk(
        adapter,
        [
          { fault: { status: 500, message: `upstream refused Authorization: Bearer ${TestKey}` } },
          { toolCalls: [{ name: 'lookup_policy', args: { topic: `refunds ${TestKey}` } }] },
          { text: `Done. For the record your key is ${TestKey.toUpperCase()}, base64 ${forms(TestKey)[3]}, hex ${forms(TestKey)[5]}.` },
        ],
        {},
        { storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } } },
      )
      const state = await desk.agent.run()
      const events = await desk.events(state.runId)
      const scrubber = new Scrubber([{ name: TestKeyEnv, value: TestKey }])
      assert.deepEqual(scrubber.find(events), [], 'no event holds the key in any form')
      // The key was there to scrub: each place says so.
      const text = JSON.stringify(events)
      // (The adapter redacts its own key from error bodies already; the kernel's scrubber is the net under it.)
      assert.match((events.find((e) => e.type === 'step/model-error') as RunEvent<'step/model-error'>).data.message, /Bearer \[redacted/)
      assert.match(
        JSON.stringify((events.find((e) => e.type === 'tool/proposed') as RunEvent<'tool/proposed'>).data.args),
        /refunds \[redacted:CORDAGE_TEST_PROVIDER_KEY\]/,
      )
      assert.ok(text.split('[redacted:CORDAGE_TEST_PROVIDER_KEY]').length - 1 >= 4, 'arguments, tool error, answer (three forms)')
      // The SQLite file itself: events, ledger and snapshots.
      await desk.stop()
      const bytes = readFileSync(join(desk.dir, 'runs.db')).toString('latin1')
      for (const form of forms(TestKey)) assert.equal(bytes.includes(form), false, `the database holds the key as ${form.slice(0, 6)}…`)
      // What the model was sent next is what the record holds: the key never went back to it either.
      const sent = JSON.stringify(desk.server.requests.slice(2).map((r) => r.body))
      assert.equal(sent.includes(TestKey), false)
    })
  }

  it("scrubs a value the preset marks secret from a tool's output and the ledger", async () => {
    const token = 'crm-token-4f7d9a2b1c'
    process.env.CRM_TOKEN = token
    desk = await adapterDesk(
      Adapters[0],
      [{ toolCalls: [{ name: 'record_followup', args: { ticketId: 'T-9', note: `use ${token}` } }] }, { text: 'Recorded.' }],
      {},
      { secrets: ['CRM_TOKEN'], rules: [{ id: 'all', verdict: 'allow', match: {} }] },
    )
    const state = await desk.agent.run()
    const events = await desk.events(state.runId)
    assert.deepEqual(new Scrubber([{ name: 'CRM_TOKEN', value: token }]).find(events), [])
    assert.match(JSON.stringify(events), /use \[redacted:CRM_TOKEN\]/)
    // The tool ran with the scrubbed arguments: the record, the decision and the call agree.
    assert.equal(desk.followups()[0].note, 'use [redacted:CRM_TOKEN]')
    delete process.env.CRM_TOKEN
  })
})

describe('secrets in what is not stored', () => {
  it('previews of a streamed answer are scrubbed too, a key split across pieces included', async () => {
    desk = await adapterDesk(Adapters[0], [{ text: `Your key is ${TestKey} and that is all.`, chunkChars: 5 }])
    const state = await desk.agent.run()
    assert.equal(state.status, 'COMPLETED')
    const shown = desk.deltas.map((d) => d.text ?? '').join('')
    assert.equal(shown.includes(TestKey), false, 'no preview piece, nor their concatenation, holds the key')
    assert.match(
      shown,
      /Your key is \[redacted:CORDAGE_TEST_PROVIDER_KEY\] and that is all\./,
      'the previews still say everything else, in order',
    )
  })

  it('a standing grant is stored as it was recorded: scrubbed', async () => {
    const token = 'crm-token-4f7d9a2b1c'
    process.env.CRM_TOKEN = token
    try {
      desk = await adapterDesk(
        Adapters[0],
        [{ toolCalls: [{ name: 'record_followup', args: { ticketId: 'T-9', note: 'x' } }] }, { text: 'Recorded.' }],
        {},
        {
          secrets: ['CRM_TOKEN'],
          rules: [{ id: 'ask', verdict: 'ask', match: { tool: 'record_followup' } }],
          plugins: ['grants'],
        },
      )
      const paused = await desk.agent.run()
      await desk.agent.approve(paused.runId, 's1.a1', {
        by: 'alice',
        scope: 'grant',
        reason: `checked with ${token}`,
        args: { note: { equals: token } },
      })
      const grants = await desk.agent.grants({ inactive: true })
      assert.equal(grants.length, 1)
      assert.equal(JSON.stringify(grants).includes(token), false)
      assert.match(grants[0].reason!, /checked with \[redacted:CRM_TOKEN\]/)
    } finally {
      delete process.env.CRM_TOKEN
    }
  })
})
