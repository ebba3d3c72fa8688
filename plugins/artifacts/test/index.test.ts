import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { charEdges, decode } from '../chunk.ts'

const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))

describe('artifacts: ranges cut at character edges', () => {
  it('pages a text of multi-byte characters without losing or splitting one', () => {
    const text = 'añ€😀b'.repeat(50)
    const all = bytes(text)
    for (const length of [1, 2, 3, 5, 7, 64]) {
      let offset = 0
      let read = ''
      let reads = 0
      while (offset < all.length) {
        const buf = all.subarray(offset, Math.min(all.length, offset + length + 3))
        const { start, end } = charEdges(buf, offset, length)
        assert.equal(start, 0, 'a read from `next` starts on a character edge')
        assert.ok(end > start, 'every read makes progress')
        read += decode(buf, start, end)
        offset += end
        reads++
      }
      assert.equal(read, text, `length ${length}`)
      assert.ok(reads > 1)
    }
  })

  it('starts a read that begins inside a character at the next one', () => {
    const all = bytes('€x')
    const { start, end } = charEdges(all.subarray(1), 1, 8)
    assert.equal(start, 2)
    assert.equal(decode(all.subarray(1), start, end), 'x')
  })

  it('returns one whole character when fewer bytes are asked than it has', () => {
    const all = bytes('😀z')
    const { start, end } = charEdges(all, 0, 1)
    assert.deepEqual([start, end], [0, 4])
  })
})
