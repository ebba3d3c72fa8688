/** The checks every store makes for threads and artifacts (core/kit/store-threads.ts), on their own. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkArtifactInput, checkedArtifactRow, parseArtifactRef, threadRefusal } from 'cordage'

const hex = 'a'.repeat(64)

describe('store-threads checks', () => {
  it('parses the two ref forms, and nothing else', () => {
    assert.deepEqual(parseArtifactRef(`artifact:sha256:${hex}`), { ref: `artifact:sha256:${hex}`, sha256: hex, visibility: 'ui' })
    assert.deepEqual(parseArtifactRef(`audit:sha256:${hex}`), { ref: `audit:sha256:${hex}`, sha256: hex, visibility: 'audit' })
    for (const bad of [
      `model:sha256:${hex}`,
      `artifact:sha256:${hex}\n`,
      ` artifact:sha256:${hex}`,
      `artifact:sha256:${'g'.repeat(64)}`,
      null,
    ])
      assert.throws(() => parseArtifactRef(bad), { code: 'invalid_input' }, String(bad))
  })

  it('takes media types with parameters, and refuses headers smuggled in one', () => {
    const put = (mediaType: string) => checkArtifactInput({ runId: 'r', bytes: new Uint8Array(1), mediaType })
    for (const ok of ['text/plain', 'application/vnd.api+json', 'text/plain; charset=utf-8', 'multipart/mixed; boundary="a b"'])
      assert.equal(put(ok).mediaType, ok)
    for (const bad of ['text', '/plain', 'text/', 'text/plain\r\nX-Evil: 1', 'text/plain; charset', 'a b/c'])
      assert.throws(() => put(bad), { code: 'invalid_input' }, bad)
  })

  it('names what is wrong with a turn, in the order the contract gives', () => {
    const link = { id: 't', turn: 2, agent: 'a' }
    const found = { agent: 'a', closed: false, previous: { runId: 'r1', status: 'COMPLETED' as const } }
    assert.equal(threadRefusal(link, found), undefined)
    assert.equal(threadRefusal({ ...link, turn: 1 }, undefined), undefined)
    assert.equal(threadRefusal(link, { ...found, agent: 'b' })?.code, 'invalid_input')
    assert.equal(threadRefusal(link, { ...found, agent: 'b', closed: true })?.code, 'invalid_input')
    assert.equal(threadRefusal(link, { ...found, closed: true })?.code, 'thread_closed')
    assert.equal(threadRefusal(link, { ...found, taken: 'r2' })?.code, 'thread_busy')
    assert.match(threadRefusal(link, { ...found, previous: undefined })?.message ?? '', /no turn 1/)
    assert.match(threadRefusal(link, { ...found, previous: { runId: 'r1', status: 'SUSPENDED' } })?.message ?? '', /run r1\) is SUSPENDED/)
  })

  it('refuses a stored artifact row whose columns do not hold together', () => {
    const row = { ref: `artifact:sha256:${hex}`, bytes: '3', mediaType: 'text/plain', runId: 'r', actionId: '', createdAt: '5' }
    assert.deepEqual(checkedArtifactRow(row), {
      ref: row.ref,
      sha256: hex,
      bytes: 3,
      mediaType: 'text/plain',
      visibility: 'ui',
      runId: 'r',
      createdAt: 5,
    })
    for (const bad of [{ ref: 'x' }, { bytes: '-1' }, { bytes: 'many' }, { mediaType: 'nope' }, { runId: null }, { createdAt: 'x' }])
      assert.throws(() => checkedArtifactRow({ ...row, ...bad }), { code: 'store_corrupt' }, JSON.stringify(bad))
  })
})
