/**
 * docs/guides/tool-search.md and this plugin's README are part of the contract: the page's example preset runs
 * and does what the page says, the listing it shows is what search_tools prints, and both config tables
 * list exactly the keys of the config schema.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { Cordage } from 'cordage/host'
import type { RunEvent } from 'cordage'
import manifest from '../manifest.ts'
import { toolsByStep } from './test-desk.ts'
import { tempDir } from '../../../test/temp.ts'

const root = resolve(import.meta.dirname, '../../..')
const page = readFileSync(join(root, 'docs/guides/tool-search.md'), 'utf8')
const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')
const blocks = (markdown: string, lang: string) =>
  [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1])
const configKeys = () => Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict)
const tableKeys = (markdown: string) => [...markdown.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1])

describe('docs/guides/tool-search.md', () => {
  it('runs its example preset: a search in step 1, the revealed tool in step 2, the answer in step 3', async () => {
    const example = blocks(page, 'yaml').find((b) => b.startsWith('# tool-search example'))
    assert.ok(example, 'the page has an example preset')
    const file = join(tempDir('tool-search-docs-'), 'preset.yml')
    writeFileSync(file, example)
    const app = await Cordage.fromPreset(file)
    try {
      const state = await app.agent('support').run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await app.agent('support').store().load(state.runId)
      const step = (...middle: string[]) => [
        'step/start',
        'step/context',
        'step/model-request',
        'step/model-response',
        ...middle,
        'step/end',
      ]
      const call = ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end']
      const search = ['tool/proposed', 'tool/decision', 'tool/start', 'slice/update', 'tool/end']
      assert.deepEqual(
        events.map((e) => e.type),
        ['run/start', 'turn/start', ...step(...search), ...step(...call), ...step('verify/start', 'verify/end'), 'turn/end', 'run/end'],
      )
      assert.deepEqual(toolsByStep(events), {
        s1: ['search_tools'],
        s2: ['search_tools', 'lookup_policy', 'slow_lookup'],
        s3: ['search_tools', 'lookup_policy', 'slow_lookup'],
      })
      const found = events.find((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')!
      const update = events.find((e): e is RunEvent<'slice/update'> => e.type === 'slice/update')!
      assert.deepEqual(update.data, { add: { revealed: ['lookup_policy', 'slow_lookup'] } })
      assert.equal(update.actionId, found.actionId)
      const shown = page.match(/```\n(\d tool\(s\) you can call[\s\S]*?)\n```/)?.[1]
      assert.equal(found.data.observation, shown, 'the listing on the page is what search_tools printed')
    } finally {
      await app.stop()
    }
  })

  it('lists every config key in its table, and no key the plugin does not have', () => {
    const section = page.split('## Config')[1].split('\n## ')[0]
    assert.deepEqual(tableKeys(section), configKeys())
    const ranking = page.split('## Ranking')[1].split('\n## ')[0]
    const rankingKeys = Object.keys(
      (manifest.config as unknown as { dict: { ranking: { dict: Record<string, unknown> } } }).dict.ranking.dict,
    )
    assert.deepEqual(tableKeys(ranking), rankingKeys)
  })
})

describe('plugins/tool-search/README.md', () => {
  it('lists every config key in its table', () => {
    assert.deepEqual(tableKeys(readme), configKeys())
  })

  it('shows a preset snippet whose tool-search config the plugin accepts', () => {
    const [snippet] = blocks(readme, 'yaml')
    const entry = (parse(snippet) as { plugins: unknown[] }).plugins.find((p) => (p as { plugin?: string }).plugin === 'tool-search') as {
      config: Record<string, unknown>
    }
    assert.ok(entry, 'the snippet has a tool-search entry')
    for (const key of Object.keys(entry.config)) assert.ok(configKeys().includes(key), `tool-search has no config key ${key}`)
    assert.doesNotThrow(() => manifest.config(entry.config))
  })
})
