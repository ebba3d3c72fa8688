import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyState, type RunState } from 'cordage'
import { CitationVerifier } from './evidence.ts'
import manifest, { type Config } from './manifest.ts'

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
    assert.deepEqual(verifier().verify({ state, answer: 'Within 30 days [source: policy/refunds#2].', signal }),
      { ok: true, evidence: [{ kind: 'citation', ref: 'policy/refunds#2', seq: 10 }] })
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
})
