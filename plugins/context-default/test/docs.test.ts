/**
 * docs/concepts/context.md and this folder's README are part of the contract: the example preset runs to the
 * figures the docs give, and the config table lists exactly the plugin's config keys.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { readService, type ContextMessage, type RunEvent } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { tempDir } from '../../../test/temp.ts'
import manifest from '../manifest.ts'
import { OmittedRef } from '../context.ts'

const page = readFileSync(resolve(import.meta.dirname, '../../../docs/concepts/context.md'), 'utf8')
const readme = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8')
const example = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.startsWith('# example: valid'))

async function runExample(yaml: string) {
  const dir = tempDir('cordage-context-docs-')
  writeFileSync(join(dir, 'preset.yml'), yaml)
  const app = await Cordage.fromPreset(join(dir, 'preset.yml'))
  try {
    const agent = app.agent('support')
    const state = await agent.run()
    assert.equal(state.status, 'COMPLETED', state.reason)
    const contexts = (await agent.store().load(state.runId)).filter((e): e is RunEvent<'step/context'> => e.type === 'step/context')
    const requests = readService<{ requests: { messages: ContextMessage[] }[] }>(agent.ctx, 'model')!.value.requests
    return { state, contexts, requests }
  } finally {
    await app.stop()
  }
}

const row = (e: RunEvent<'step/context'>) => `${e.data.messages} messages, ${e.data.tokens} tokens`

describe('docs/concepts/context.md', () => {
  it('runs its example preset: the projection shrinks under the budget, the state keeps everything', async () => {
    assert.ok(example, 'the page has an example preset')
    const budgeted = await runExample(example)
    const unbounded = await runExample(example.replace('maxTokens: 240', 'maxTokens: 0'))
    for (const step of [1, 5, 7]) {
      assert.ok(
        page.includes(`| ${step} | ${row(unbounded.contexts[step - 1])} | ${row(budgeted.contexts[step - 1])} |`),
        `the table row of step ${step}`,
      )
    }
    assert.deepEqual(
      [budgeted.contexts[6].data.messages, budgeted.contexts[6].data.tokens, unbounded.contexts[6].data.tokens],
      [10, 238, 361],
    )
    assert.ok(budgeted.contexts.every((e) => e.data.tokens <= 240 && e.producer === 'context-default@1.2.0'))
    const seen = budgeted.requests[6].messages
    assert.deepEqual(
      seen.map((m) => [m.role, m.source, m.ref]),
      [
        ['system', 0, undefined],
        ['system', 0, 'note:style'],
        ['user', 2, undefined],
        ['user', 0, OmittedRef],
        ['assistant', 33, undefined],
        ['tool', 37, undefined],
        ['assistant', 42, undefined],
        ['tool', 46, undefined],
        ['assistant', 51, undefined],
        ['tool', 55, undefined],
      ],
    )
    assert.ok(page.includes('6 earlier messages between seq 6') && seen[3].text.includes('6 earlier messages between seq 6 and seq 28'))
    assert.ok(readme.includes(seen[3].text), 'the README shows the note as the model saw it')
    assert.equal(budgeted.state.transcript.filter((t) => t.kind === 'observation').length, 6, 'the state keeps all six results')
  })
})

describe('context-default README', () => {
  it('lists every config key in its table, and no key the plugin does not have', () => {
    const section = readme.split('## Config')[1].split('\n## ')[0]
    const documented = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1])
    assert.deepEqual(documented, Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict))
  })
})
