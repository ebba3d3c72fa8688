import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyState, type CordageError, type RunState } from 'cordage'
import { supportDesk } from '../../../test/helpers.ts'
import { CitationVerifier } from '../evidence.ts'
import manifest, { type Config } from '../manifest.ts'

const verifier = (config: Partial<Config> = {}) => new CitationVerifier(manifest.config(config) as Config)
const signal = new AbortController().signal

function stateWith(observations: { text: string; ok: boolean; seq: number }[]): RunState {
  const state = emptyState('r')
  for (const o of observations) state.transcript.push({ kind: 'observation', actionId: `s1.a${o.seq}`, tool: 't', ...o })
  return state
}

describe('verifier-basic', () => {
  it('passes an answer citing a source a tool returned, with the citation as evidence', () => {
    const state = stateWith([{ text: 'Refunds within 30 days [source: policy/refunds#2]', ok: true, seq: 10 }])
    assert.deepEqual(verifier().verify({ state, answer: 'Within 30 days [source: policy/refunds#2].', signal }), {
      ok: true,
      evidence: [{ kind: 'citation', ref: 'policy/refunds#2', seq: 10 }],
    })
  })

  it('fails with missing_evidence when the answer cites nothing', () => {
    const result = verifier().verify({ state: stateWith([]), answer: 'Within 30 days.', signal })
    assert.ok(!result.ok)
    assert.equal(result.code, 'missing_evidence')
    assert.equal(result.repairable, true)
    assert.match(result.reason, /cites 0 source\(s\), 1 required/)
  })

  it('does not count a citation from a failed tool result or one never returned', () => {
    const state = stateWith([{ text: 'error about [source: policy/x]', ok: false, seq: 3 }])
    const result = verifier().verify({ state, answer: 'See [source: policy/x].', signal })
    assert.ok(!result.ok && /which no tool returned/.test(result.reason))
    assert.equal(verifier({ mustBeObserved: false }).verify({ state, answer: 'See [source: policy/x].', signal }).ok, true)
  })

  it('uses a custom pattern and minimum count', () => {
    const v = verifier({ pattern: 'REF-(\\d+)', minCount: 2, mustBeObserved: false, repairable: false })
    assert.equal(v.verify({ state: stateWith([]), answer: 'REF-1 and REF-2', signal }).ok, true)
    const one = v.verify({ state: stateWith([]), answer: 'REF-1', signal })
    assert.ok(!one.ok && one.repairable === false)
  })

  it('runs the pattern in time linear in the answer, however the pattern is written', { timeout: 20_000 }, () => {
    // On a backtracking engine each of these takes longer than the universe has left.
    const nested = verifier({ pattern: '^(a+)+$', mustBeObserved: false })
    assert.equal(nested.verify({ state: stateWith([]), answer: 'a'.repeat(50_000) + 'b', signal }).ok, false)
    assert.equal(nested.verify({ state: stateWith([]), answer: 'a'.repeat(50_000), signal }).ok, true)
    const overlapping = verifier({ pattern: '(x+x+)+y', mustBeObserved: false })
    assert.equal(overlapping.verify({ state: stateWith([]), answer: 'x'.repeat(50_000), signal }).ok, false)
  })

  it('refuses, in the schema, a pattern that needs backtracking, saying why', () => {
    for (const pattern of ['\\[source: (?=policy)([^\\]]+)\\]', '\\[(source): ([^\\]]+)\\] \\1']) {
      assert.throws(
        () => manifest.config({ pattern }),
        (error: Error) => {
          assert.ok(error.message.startsWith(`$.pattern /${pattern}/ is not a valid regular expression: `), error.message)
          assert.match(error.message, /lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine/)
          return true
        },
      )
    }
  })

  it('is refused through the host with plugin_config_invalid, at the line of the pattern', async () => {
    await assert.rejects(supportDesk({ script: [], verifier: { pattern: '(?<=\\[)source' } }), (error: CordageError) => {
      assert.equal(error.code, 'plugin_config_invalid')
      assert.match(
        error.message,
        /preset\.yml:\d+:\d+ agents\.support\.plugins\[3\]\.config\.pattern: plugin verifier-basic@1\.0\.0: \/\(\?<=\\\[\)source\/ is not a valid regular expression: .*lookahead, lookbehind and backreferences are not supported/,
      )
      return true
    })
  })
})
