import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { emptyState, type ContextMessage, type Projection, type RunState } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { deskPreset, refundAnswer, tempDir } from '../../../test/helpers.ts'
import { DefaultContext, OmittedRef } from '../context.ts'
import manifest, { type Config } from '../manifest.ts'
import { loadSources, type SourceItem } from '../sources.ts'
import { estimateTokens, messageTokens } from '../tokens.ts'

/** The plugin's config with its defaults, as the host would hand it over. */
const configOf = (config: Partial<Config> = {}): Config => (manifest.config as unknown as (c: unknown) => Config)(config)
const context = (config: Partial<Config> = {}, sources: SourceItem[] = []) =>
  new DefaultContext(configOf({ system: 'sys', ...config }), sources)

/** A run: the goal, then `steps` lookups with their results (the third one failed). */
function run(steps: number, resultChars = 80): RunState {
  const state = emptyState('r')
  state.transcript.push({ kind: 'user', text: 'What is the refund window?', seq: 2 })
  for (let i = 1; i <= steps; i++) addStep(state, i, resultChars)
  return state
}

function addStep(state: RunState, i: number, resultChars = 80) {
  state.transcript.push({
    kind: 'assistant',
    decision: { kind: 'tool_calls', calls: [{ name: 'lookup', args: { i } }] },
    actionIds: [`s${i}.a1`],
    seq: i * 10,
  })
  const text = `result ${i} `.padEnd(resultChars, '.') + ` [source: policy/p${i}]`
  state.transcript.push({ kind: 'observation', actionId: `s${i}.a1`, tool: 'lookup', text, ok: i !== 3, seq: i * 10 + 1 })
}

function assertPaired(messages: ContextMessage[]) {
  const calls = messages.flatMap((m) => (m.calls ?? []).map((c) => c.actionId)).sort()
  const results = messages
    .filter((m) => m.role === 'tool')
    .map((m) => m.actionId!)
    .sort()
  assert.deepEqual(calls, results, 'every call with its result, every result with its call')
}

const total = (p: Projection) => p.messages.reduce((n, m) => n + messageTokens(m), 0)

describe('context-default: sections and provenance', () => {
  it('orders the sections system, sources, goal, transcript, each message with its provenance', () => {
    const sources = [
      { ref: 'file:docs/policy.md#1', text: '[docs/policy.md#1] Refunds within 30 days.' },
      { ref: 'note:tone', text: '[note tone] Be brief.' },
    ]
    const state = run(2)
    const { messages } = context({}, sources).assemble({ state, tools: [] })
    assert.deepEqual(
      messages.map((m) => [m.role, m.source, m.ref]),
      [
        ['system', 0, undefined],
        ['system', 0, 'file:docs/policy.md#1'],
        ['system', 0, 'note:tone'],
        ['user', 2, undefined],
        ['assistant', 10, undefined],
        ['tool', 11, undefined],
        ['assistant', 20, undefined],
        ['tool', 21, undefined],
      ],
    )
    assert.deepEqual(messages[4].calls, [{ actionId: 's1.a1', name: 'lookup', args: { i: 1 } }])
    assert.equal(messages[5].actionId, 's1.a1')
  })

  it('reads sources from files relative to the preset folder, one item per paragraph, and inline notes', () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'docs'))
    writeFileSync(join(dir, 'docs/policy.md'), '# Refunds\n\nDamaged items: 30 days.\n\nUnused items: 14 days.\n')
    const items = loadSources(
      [{ file: 'docs/policy.md' }, { note: 'Never promise more than 100 EUR.', name: 'limits' }, { note: 'Be brief.' }],
      dir,
    )
    assert.deepEqual(
      items.map((i) => i.ref),
      ['file:docs/policy.md#1', 'file:docs/policy.md#2', 'note:limits', 'note:3'],
    )
    assert.equal(items[0].text, '[docs/policy.md#1] # Refunds\nDamaged items: 30 days.', 'a heading stays with its paragraph')
    assert.throws(() => loadSources([{ file: 'docs/missing.md' }], dir), { code: 'plugin_config_invalid', message: /missing\.md/ })
    assert.throws(() => loadSources([{ file: 'docs/policy.md', note: 'x' }], dir), {
      code: 'plugin_config_invalid',
      message: /sources\[0\] must have exactly one of file and note/,
    })
  })

  it('marks a failed result as an error, and clips a long one with the seq of the full result and its cut citations', () => {
    const state = run(3, 2000)
    const { messages } = context({ observationTokens: 100 }).assemble({ state, tools: [] })
    const clipped = messages.find((m) => m.source === 11)!
    assert.ok(estimateTokens(clipped.text) <= 100, 'clipped to the limit, note included')
    assert.match(
      clipped.text,
      /^result 1 \.+ … \[clipped \d+ of 2\d{3} characters; full result: seq 11; cut citations: \[source: policy\/p1\]\]$/,
    )
    assert.match(messages.find((m) => m.source === 31)!.text, /^Error: result 3/, 'a failure stays marked however much is cut')
    assert.equal(
      state.transcript[2].kind === 'observation' && state.transcript[2].text.length,
      2000 + ' [source: policy/p1]'.length,
      'state keeps the whole result',
    )
  })

  it('clips a long result in time linear in its length, however the citation pattern is written', { timeout: 20_000 }, () => {
    // On a backtracking engine each of these takes longer than the universe has left.
    for (const [citationPattern, text, kept] of [
      ['(a+)+$', 'a'.repeat(50_000) + 'b', ''],
      ['(x+x+)+y', 'x'.repeat(50_000), ''],
      ['\\[source: [^\\]]+\\]', 'x'.repeat(50_000) + ' [source: policy/p9]', '; cut citations: [source: policy/p9]'],
    ]) {
      const state = emptyState('r')
      state.transcript.push({ kind: 'user', text: 'go', seq: 2 })
      state.transcript.push({ kind: 'observation', actionId: 's1.a1', tool: 'lookup', text, ok: true, seq: 11 })
      const clipped = context({ observationTokens: 100, citationPattern })
        .assemble({ state, tools: [] })
        .messages.find((m) => m.source === 11)!
      assert.ok(clipped.text.endsWith(`full result: seq 11${kept}]`), clipped.text.slice(-120))
    }
  })
})

describe('context-default: the token budget', () => {
  it('shrinks the projection under the budget while run state keeps everything', () => {
    const state = run(12)
    const before = structuredClone(state)
    const projection = context({ maxTokens: 300 }).assemble({ state, tools: [] })
    assert.ok(projection.tokens <= 300, `${projection.tokens} tokens`)
    assert.ok(projection.messages.length < state.transcript.length + 1, 'the model sees less than the run holds')
    assert.deepEqual(state, before, 'assembling changed nothing in the state')
    assert.equal(state.transcript.filter((e) => e.kind === 'observation').length, 12)
    const note = projection.messages.find((m) => m.ref === OmittedRef)!
    assert.equal(note.role, 'user')
    assert.match(
      note.text,
      /^\[context\] Left out to fit the context budget: \d+ earlier messages between seq \d+ and seq \d+\. The run log keeps all of them\.$/,
    )
    assert.equal(projection.messages.indexOf(note), 2, 'the note follows the goal')
  })

  it('never splits a call from its result, and keeps the goal and the last message, at any budget', () => {
    const state = run(10)
    for (let budget = 20; budget <= 800; budget += 20) {
      const { messages, tokens } = context({ maxTokens: budget, recent: 1 }).assemble({ state, tools: [] })
      assertPaired(messages)
      assert.equal(messages[1].text, 'What is the refund window?', `the goal at budget ${budget}`)
      assert.equal(messages.at(-1)!.source, 101, `the last message at budget ${budget}`)
      assert.equal(
        tokens,
        messages.reduce((n, m) => n + messageTokens(m), 0),
        'tokens count exactly what is returned',
      )
    }
  })

  it('clips older results before it drops anything, and drops the lowest priority, oldest first', () => {
    const state = run(6, 400)
    state.transcript.splice(5, 0, { kind: 'user', text: 'Also check the warranty, please.', seq: 25 })
    const full = context().assemble({ state, tools: [] })
    const clippedOnly = context({ maxTokens: full.tokens - 100, recent: 1, clippedTokens: 40 }).assemble({ state, tools: [] })
    assert.equal(clippedOnly.messages.length, full.messages.length, 'clipping was enough: nothing dropped')
    assert.ok(clippedOnly.messages.some((m) => m.role === 'tool' && /full result: seq \d+/.test(m.text)))
    const tight = context({ maxTokens: 300, recent: 1, clippedTokens: 40 }).assemble({ state, tools: [] })
    const kept = tight.messages.map((m) => m.source)
    assert.ok(kept.includes(25), "the user's later input (priority 90) outlives the exchanges")
    assert.ok(kept.includes(31), 'the failed attempt (priority 60) outlives successful exchanges (50)')
    assert.ok(!kept.includes(11) && !kept.includes(21), 'the oldest successful exchanges went first')
    assert.ok(!kept.includes(41) && !kept.includes(51), 'and newer successful exchanges too, before the failure')
    assert.ok(tight.tokens <= 300, `${tight.tokens} tokens`)
  })

  it('keeps sources within their share and drops their last paragraphs first', () => {
    const sources = Array.from({ length: 6 }, (_, i) => ({
      ref: `file:kb.md#${i + 1}`,
      text: `[kb.md#${i + 1}] ${'word '.repeat(25).trim()}`,
    })) // 36 tokens each
    const { messages } = context({ maxTokens: 400 }, sources).assemble({ state: run(1), tools: [] })
    const kept = messages.filter((m) => m.ref?.startsWith('file:'))
    assert.deepEqual(
      kept.map((m) => m.ref),
      ['file:kb.md#1', 'file:kb.md#2', 'file:kb.md#3'],
      'at most 30% of 400 tokens, first paragraphs first',
    )
    assert.ok(kept.reduce((n, m) => n + messageTokens(m), 0) <= 120)
    assert.match(messages.find((m) => m.ref === OmittedRef)!.text, /3 source paragraphs/)
  })

  it('is deterministic: incremental assembly gives what a fresh one gives, step after step', () => {
    const state = run(0)
    const incremental = context({ maxTokens: 250, recent: 2 })
    for (let i = 1; i <= 12; i++) {
      addStep(state, i, 150)
      const step = incremental.assemble({ state, tools: [] })
      assert.deepEqual(step, context({ maxTokens: 250, recent: 2 }).assemble({ state, tools: [] }), `step ${i}`)
      assert.equal(step.tokens, total(step))
    }
  })

  it('estimates a token a short word, digits in pairs, punctuation runs of four, three CJK characters in four; four a message', () => {
    assert.equal(estimateTokens('the cat sat on the mat'), 6)
    assert.equal(estimateTokens('1234567'), 4)
    assert.equal(estimateTokens('{"a":'), 3, '{" and ": merge')
    assert.equal(estimateTokens('退款期限是多久'), 6)
    assert.equal(estimateTokens('😀'), 2, 'a surrogate pair is one character, counted at the rate of other characters')
    assert.equal(messageTokens({ role: 'user', text: 'the cat sat on the mat', source: 2 }), 10)
  })

  it("clips and fits with the model's counter when it has one", () => {
    const chars = { name: 'chars', count: (text: string) => text.length }
    const state = run(0)
    addStep(state, 1, 400)
    const clipped = new DefaultContext(configOf({ system: 'sys', observationTokens: 100 }), [], () => chars).assemble({ state, tools: [] })
    const result = clipped.messages.find((m) => m.role === 'tool')!
    assert.ok(result.text.length <= 100 && result.text.includes('[clipped'), 'clipped to 100 characters, note included')
    assert.equal(
      clipped.tokens,
      clipped.messages.reduce((n, m) => n + 4 + m.text.length + (m.calls ? JSON.stringify(m.calls).length : 0), 0),
    )
  })
})

describe('context-default: through the kernel', () => {
  it("runs the support desk under a budget: the model sees less than the run keeps, and each step's count is exact", async () => {
    const topics = ['shipping', 'returns', 'warranty', 'shipping', 'returns', 'warranty', 'refunds']
    const script = [...topics.map((topic) => ({ tool: 'lookup_policy', args: { topic } })), { final: refundAnswer }]
    const dir = tempDir()
    writeFileSync(join(dir, 'handbook.md'), 'Answer from the policy only.\n\nCite every fact.\n')
    const preset = deskPreset({ script }, 'outbox.jsonl')
    preset.agents.support.plugins = preset.agents.support.plugins.map((p) =>
      p === 'context-basic'
        ? // The handbook outranks old lookups here (sources default to the lowest priority).
          {
            plugin: 'context-default',
            config: { maxTokens: 260, recent: 2, sources: [{ file: 'handbook.md' }], classes: { sources: { priority: 95 } } },
          }
        : p,
    )
    writeFileSync(join(dir, 'preset.yml'), stringify(preset))
    const app = await Cordage.fromPreset(join(dir, 'preset.yml'))
    try {
      const agent = app.agent('support')
      const state = await agent.run()
      assert.equal(state.status, 'COMPLETED')
      const events = await agent.store().load(state.runId)
      const contexts = events.filter((e) => e.type === 'step/context')
      assert.ok(contexts.every((e) => e.producer === 'context-default@1.2.0'))
      assert.ok(
        contexts.every((e) => e.type === 'step/context' && e.data.tokens <= 260),
        'every step under the budget',
      )
      const model = (await import('cordage')).readService<{ requests: { messages: ContextMessage[] }[] }>(agent.ctx, 'model')!.value
      const last = model.requests.at(-1)!.messages
      assert.deepEqual(
        last.slice(1, 3).map((m) => m.ref),
        ['file:handbook.md#1', 'file:handbook.md#2'],
      )
      assert.ok(last.filter((m) => m.role === 'tool').length < 7, 'older results left out')
      assert.equal(state.transcript.filter((e) => e.kind === 'observation').length, 7, 'the state kept every result')
      model.requests.forEach((r, i) => {
        const recorded = contexts[i]
        assert.ok(recorded.type === 'step/context' && recorded.data.tokens === r.messages.reduce((n, m) => n + messageTokens(m), 0))
      })
    } finally {
      await app.stop()
    }
  })
})

describe('context-default: config', () => {
  /** The error a support-desk preset with this context entry is refused with. */
  async function refused(entry: unknown, files: Record<string, string> = {}) {
    const dir = tempDir()
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    const preset = deskPreset({ script: [] }, 'outbox.jsonl')
    preset.agents.support.plugins = preset.agents.support.plugins.map((p) =>
      p === 'context-basic' ? entry : p,
    ) as typeof preset.agents.support.plugins
    writeFileSync(join(dir, 'preset.yml'), stringify(preset))
    try {
      await (await Cordage.fromPreset(join(dir, 'preset.yml'))).stop()
    } catch (error) {
      return error as { code: string; message: string }
    }
    assert.fail('the preset loaded')
  }

  it('refuses a bad config when the preset loads, naming the key and what is wrong', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ maxTokens: -1 }, /plugins\[2\]\.config\.maxTokens: plugin context-default@1\.2\.0: expected number >= 0 but got -1/],
      [
        { maxTokns: 300 },
        /config\.maxTokns: plugin context-default@1\.2\.0 has no config key "maxTokns"; allowed: system, sources, maxTokens/,
      ],
      [
        { classes: { sources: { share: 2 } } },
        /config\.classes\.sources\.share: plugin context-default@1\.2\.0: expected number <= 1 but got 2/,
      ],
      [
        { citationPattern: '([' },
        /preset\.yml:\d+:\d+ agents\.support\.plugins\[2\]\.config\.citationPattern: plugin context-default@1\.2\.0: \/\(\[\/ is not a valid regular expression: missing closing \]/,
      ],
      [
        { citationPattern: '\\[source: (?!draft)[^\\]]+\\]' },
        /config\.citationPattern: plugin context-default@1\.2\.0: .* is not a valid regular expression: .*\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process\)/,
      ],
      [{ citationPattern: '\\[(source)\\] \\1' }, /config\.citationPattern: .*backreferences are not supported/],
      [{ observationTokens: 4 }, /config\.observationTokens: .*expected number >= 16 but got 4/],
    ]
    for (const [config, message] of cases) {
      const error = await refused({ plugin: 'context-default', config })
      assert.equal(error.code, 'plugin_config_invalid', error.message)
      assert.match(error.message, message)
    }
  })

  it('refuses a source that is both a file and a note, or a file that is not there, before any run', async () => {
    const both = await refused({ plugin: 'context-default', config: { sources: [{ file: 'kb.md', note: 'x' }] } }, { 'kb.md': 'text' })
    assert.equal(both.code, 'plugin_config_invalid')
    assert.match(
      both.message,
      /context-default@1\.2\.0 .* failed while starting: context-default: sources\[0\] must have exactly one of file and note/,
    )
    const missing = await refused({ plugin: 'context-default', config: { sources: [{ file: 'kb.md' }] } })
    assert.match(missing.message, /cannot read source file .*kb\.md/)
  })
})
