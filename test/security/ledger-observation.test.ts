/**
 * A write replayed from the ledger keeps the tool's own observation (issue 10, finding 10). Two runs
 * make the same idempotent write under one key; the second is deduplicated, and the model and the
 * verifier of that run must see what the tool said the first time, citation included, not a rendering
 * of the raw output: otherwise a correct replay ends FAILED_VERIFICATION (missing_evidence). The
 * second run is driven by a new host on the same store, so the observation comes from the database.
 */
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { Cordage } from '../../core/host/app.ts'
import { deskPreset, tempDir } from '../helpers.ts'

const dirs: string[] = []
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** How often the note tool really wrote (shared through globalThis: the plugin lives outside the repository). */
const writes: string[] = ((globalThis as Record<string, unknown>).__noteWrites ??= []) as string[]

/**
 * A plugin folder outside the repository with `record_note`: an idempotent write keyed by ticket, whose
 * output is a bare receipt and whose observation carries the citation the verifier needs.
 */
function notePlugin(): string {
  const dir = tempDir('cordage-notes-')
  dirs.push(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(
    join(dir, 'manifest.ts'),
    `
import { Schema } from 'cordis'
export default { name: 'notes', version: '1.0.0', requires: { tools: '^1.0.0' }, config: Schema.object({}) }
`,
  )
  writeFileSync(
    join(dir, 'index.ts'),
    `
import { z } from 'zod'
import { definePlugin, defineTool } from 'cordage'
import manifest from './manifest.ts'
import { tempDir } from '../temp.ts'
const writes = (globalThis.__noteWrites ??= [])
export default definePlugin(manifest, (ctx) => {
  ctx.tools.register(defineTool({
    name: 'record_note', description: 'Record a note on a ticket.', sideEffect: 'external', idempotent: true, timeoutMs: 2000,
    input: z.object({ ticketId: z.string(), note: z.string() }),
    idempotencyKey: ({ ticketId }) => ticketId,
    async run({ ticketId, note }, io) {
      writes.push(io.idempotencyKey + ' ' + note)
      const receipt = 'N-' + writes.length
      return { output: { receipt }, receipt, observation: 'Note ' + receipt + ' recorded on ' + ticketId + ' [source: ticket/' + ticketId + '#' + receipt + ']' }
    },
  }))
})
`,
  )
  return dir
}

const stores: [string, () => { entry: unknown; cleanup?: () => Promise<void> }, string | false][] = [
  ['store-sqlite', () => ({ entry: { plugin: 'store-sqlite', config: { path: 'runs.db' } } }), false],
  [
    'store-postgres',
    () => {
      const schema = `obs_${process.pid}_${Date.now().toString(36)}`
      return {
        entry: { plugin: 'store-postgres', config: { schema } },
        cleanup: async () => {
          const { default: pg } = await import('pg')
          const client = new pg.Client(process.env.CORDAGE_PG_URL)
          await client.connect()
          try {
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
          } finally {
            await client.end()
          }
        },
      }
    },
    process.env.CORDAGE_PG_URL ? false : 'no PostgreSQL: set CORDAGE_PG_URL',
  ],
]

describe('a write deduplicated under its idempotency key', () => {
  for (const [name, store, skip] of stores) {
    it(`gives the second run the tool's own observation, so a verifier looking for its citation completes it (${name})`, {
      skip,
    }, async () => {
      writes.length = 0
      const { entry, cleanup } = store()
      const dir = tempDir()
      const file = join(dir, 'preset.yml')
      writeFileSync(
        file,
        stringify(
          deskPreset(
            {
              script: [
                { tool: 'record_note', args: { ticketId: 'T-9', note: 'refund sent' } },
                { final: 'Recorded the refund note [source: ticket/T-9#N-1].' },
              ],
              rules: [{ id: 'all', verdict: 'allow', match: {} }],
              storePlugin: entry,
              plugins: [{ path: notePlugin() }],
            },
            'outbox.jsonl',
          ),
        ),
      )
      try {
        const host = async () =>
          Cordage.fromPreset(file, {
            onError: (error) => {
              throw error
            },
          })
        const one = await host()
        const first = await one.agent('support').run('note the refund')
        await one.stop()
        assert.equal(first.status, 'COMPLETED', first.reason)

        const two = await host()
        const second = await two.agent('support').run('note the refund again')
        const events = await two.agent('support').store().load(second.runId)
        const firstEnd = (await two.agent('support').store().load(first.runId)).find((e) => e.type === 'tool/end') as RunEvent<'tool/end'>
        const effect = await two.agent('support').store().effect('record_note:T-9')
        await two.stop()

        assert.deepEqual(writes, ['record_note:T-9 refund sent'], 'the tool wrote once')
        assert.equal(
          effect?.observation,
          'Note N-1 recorded on T-9 [source: ticket/T-9#N-1]',
          'the ledger kept the observation with the outcome',
        )
        const end = events.find((e) => e.type === 'tool/end') as RunEvent<'tool/end'>
        assert.deepEqual(end.data.deduplicated, { runId: first.runId, actionId: 's1.a1' })
        assert.equal(
          end.data.observation,
          `${firstEnd.data.observation}\n(Already done under this idempotency key by ${first.runId} s1.a1; not done again.)`,
        )
        assert.equal(second.status, 'COMPLETED', `${second.status} ${second.failureCode ?? ''} ${second.reason ?? ''}`)
        const verdict = events.find((e) => e.type === 'verify/end') as RunEvent<'verify/end'>
        assert.ok(verdict.data.ok)
      } finally {
        await cleanup?.()
      }
    })
  }
})
