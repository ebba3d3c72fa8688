/**
 * A bad config is refused when the preset loads, with the key and what is wrong with it; the defaults
 * are what the README's config table says.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import manifest, { type Config } from '../manifest.ts'
import { presetError } from './test-desk.ts'

const entry = (config: Record<string, unknown>) => ({ script: [], plugins: [{ plugin: 'compaction-summary', config }] })

describe('compaction-summary: config', () => {
  it('refuses a bad config, naming the key and what is wrong', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ windowTokens: 0 }, /config\.windowTokens: plugin compaction-summary@1\.1\.0: expected number >= 1 but got 0/],
      [{ keepRecentShare: 1.5 }, /config\.keepRecentShare: plugin compaction-summary@1\.1\.0: expected number <= 1 but got 1\.5/],
      [
        { reserve: 100 },
        /config\.reserve: plugin compaction-summary@1\.1\.0 has no config key "reserve"; allowed: windowTokens, reserveTokens/,
      ],
      [
        { citationPattern: '([' },
        /preset\.yml:\d+:\d+ agents\.support\.plugins\[\d+\]\.config\.citationPattern: plugin compaction-summary@1\.1\.0: \/\(\[\/ is not a valid regular expression: missing closing \]/,
      ],
      [
        { commitmentPattern: '(?<' },
        /config\.commitmentPattern: plugin compaction-summary@1\.1\.0: \/\(\?<\/ is not a valid regular expression/,
      ],
      [
        { citationPattern: '\\[source: ((?!draft)[^\\]]+)\\]' },
        /config\.citationPattern: plugin compaction-summary@1\.1\.0: .*\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process\)/,
      ],
      [
        { commitmentPattern: '\\b(I will) (\\w+) \\2\\b' },
        /config\.commitmentPattern: plugin compaction-summary@1\.1\.0: .*backreferences are not supported/,
      ],
      [
        { windowTokens: 8000, reserveTokens: 8000 },
        /compaction-summary@1\.1\.0 .* failed while starting: compaction-summary: reserveTokens \(8000\) must be less than windowTokens \(8000\)/,
      ],
    ]
    for (const [config, message] of cases) {
      const error = await presetError(entry(config))
      assert.equal(error?.code, 'plugin_config_invalid', error?.message ?? `${JSON.stringify(config)} was accepted`)
      assert.match(error!.message, message)
    }
  })

  it('accepts the README example, and needs a model and a tools service', async () => {
    assert.equal(await presetError(entry({ windowTokens: 32000, reserveTokens: 4000, keepRecentShare: 0.4 })), undefined)
    assert.deepEqual(manifest.requires, { model: '^1.1.0', tools: '^1.0.0' })
  })

  it('has the defaults its README gives', () => {
    const defaults = (manifest.config as unknown as (c: unknown) => Config)({})
    assert.deepEqual(defaults, {
      windowTokens: 128000,
      reserveTokens: 16000,
      keepRecentShare: 0.4,
      summaryShare: 0.25,
      summaryMaxTokens: 2000,
      useModel: true,
      citationPattern: '\\[source: ([^\\]]+)\\]',
      commitmentPattern: "\\b(I will|I'll|I am going to|I still need to|next,? I|then I|TODO)\\b",
      recall: true,
      recallMaxChars: 4000,
      cachedRuns: 256,
    })
  })

  it('lists every config key in the tables of its README and docs/concepts/compaction.md, and no key it does not have', () => {
    const keys = Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict)
    for (const file of ['README.md', '../../docs/concepts/compaction.md']) {
      const section = readFileSync(resolve(import.meta.dirname, '..', file), 'utf8')
        .split(/^#+ Config$/m)[1]
        .split(/\n#+ /)[0]
      assert.deepEqual(
        [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]),
        keys,
        file,
      )
    }
  })
})
