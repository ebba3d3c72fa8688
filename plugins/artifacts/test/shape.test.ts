import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import type { ResultShape } from 'cordage'
import { headOf, shapeResult, type ShapeConfig } from '../shape.ts'

const config: ShapeConfig = { artifactAboveBytes: 1024, keepRedacted: false, headChars: 100 }
const value = (content: string, extra: Partial<ResultShape> = {}): ResultShape => ({
  actionId: 's1.a1',
  tool: 'report',
  content,
  json: false,
  observation: content.slice(0, 50),
  ownObservation: false,
  ...extra,
})
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const never = (why: string) => assert.fail(`noted: ${why}`)

describe('artifacts: what becomes an artifact', () => {
  it('keeps a result inline up to the threshold, and apart above it, with its head and where to read on', () => {
    assert.equal(shapeResult(value('x'.repeat(1024)), config, true, never), undefined)
    const content = 'é'.repeat(600) // 1200 bytes, 600 characters
    const shaped = shapeResult(value(content), config, true, never)!
    assert.deepEqual(shaped.artifact, { mediaType: 'text/plain; charset=utf-8' })
    const ref = `artifact:sha256:${sha(content)}`
    assert.equal(
      shaped.observation,
      `${'é'.repeat(100)}\n[The full result (1200 bytes, text/plain; charset=utf-8) is stored as artifact ${ref}; the first 200 bytes are above. Read more with read_artifact {"ref":"${ref}","offset":200}.]`,
    )
    assert.equal(shaped.content, content, 'the content is never changed')
    assert.equal(shapeResult(value('[1]'.repeat(400), { json: true }), config, true, never)?.artifact?.mediaType, 'application/json')
  })

  it("takes the tool's own threshold over the agent's, either way", () => {
    const content = 'y'.repeat(2000)
    assert.equal(shapeResult(value(content, { artifactAboveBytes: 4096 }), config, true, never), undefined)
    assert.ok(shapeResult(value('y'.repeat(600), { artifactAboveBytes: 512 }), config, true, never)?.artifact)
  })

  it("shows the tool's own observation, at most headChars of it, and reads on from the start", () => {
    const shaped = shapeResult(value('z'.repeat(5000), { observation: 'S'.repeat(300), ownObservation: true }), config, true, never)!
    assert.ok(shaped.observation.startsWith(`${'S'.repeat(100)}\n[The full result (5000 bytes`))
    assert.match(
      shaped.observation,
      /the tool's summary is above\. Read more with read_artifact \{"ref":"artifact:sha256:[0-9a-f]{64}","offset":0\}/,
    )
  })

  it('never cuts a head inside a surrogate pair', () => {
    assert.equal(headOf(`${'a'.repeat(99)}😀`, 100), 'a'.repeat(99))
    assert.equal(headOf('abc', 100), 'abc')
  })

  it('keeps no withheld result apart, and the raw form of a redacted one only when the agent says so', () => {
    const withheld = value('w'.repeat(5000), { redacted: { guard: 'card', withheld: true } })
    assert.equal(shapeResult(withheld, config, true, never), undefined)
    assert.deepEqual(shapeResult(withheld, { ...config, keepRedacted: true }, true, never)?.keepRaw, true)
    const redacted = value('card [redacted:card]', { redacted: { guard: 'card', withheld: false } })
    assert.equal(shapeResult(redacted, config, true, never), undefined)
    assert.deepEqual(shapeResult(redacted, { ...config, keepRedacted: true }, true, never), { ...redacted, keepRaw: true })
    assert.equal(shapeResult(value('plain'), { ...config, keepRedacted: true }, true, never), undefined, 'nothing redacted, no raw copy')
  })

  it('keeps everything inline when the store keeps no artifacts, and says why', () => {
    const notes: string[] = []
    const redacted = value('v'.repeat(5000), { redacted: { guard: 'card', withheld: false } })
    assert.equal(
      shapeResult(redacted, { ...config, keepRedacted: true }, false, (why) => notes.push(why)),
      undefined,
    )
    assert.deepEqual(notes, [
      'a result above 1024 bytes is kept inline in its event',
      'the raw result of a redacted call is not kept for the audit view',
    ])
  })
})
