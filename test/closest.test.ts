import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { closest } from 'cordage/host'

describe('closest (did you mean)', () => {
  it('finds a name a few edits away, ignoring case', () => {
    assert.equal(closest('polcy-rules', ['context-basic', 'policy-rules']), 'policy-rules')
    assert.equal(closest('LOOKUP_ORDR', ['append_note', 'lookup_order']), 'lookup_order')
  })

  it('falls back to a name it starts like, and gives nothing for a stranger', () => {
    assert.equal(closest('store', ['store-sqlite', 'tools-registry']), 'store-sqlite')
    assert.equal(closest('zzz', ['append_note']), undefined)
  })
})
