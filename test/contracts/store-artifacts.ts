/**
 * The artifact part of the store contract (2.3.0), run by runStoreContract for every store: blobs kept
 * once by content and visibility, listed under the runs that stored them, read whole (checked against
 * their hash) or by range.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import type { CordageError } from 'cordage'
import { runEvents, type ContractOptions, type KernelStore } from './store.ts'

const text = (s: string) => new TextEncoder().encode(s)
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

export function runArtifactContract(makeStore: () => Promise<KernelStore>, contract: ContractOptions) {
  describe('artifacts (since 2.3.0)', () => {
    async function withRuns() {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      await store.append('r2', runEvents('r2', 1, 1), 0)
      return store
    }

    it('keeps a blob once by content, lists it per run and action, and reads it back', async () => {
      const store = await withRuns()
      const bytes = text('hello artifacts')
      const first = await store.putArtifact!({ runId: 'r1', actionId: 's1.a1', bytes, mediaType: 'text/plain' })
      assert.deepEqual(first, {
        ref: `artifact:sha256:${sha(bytes)}`,
        sha256: sha(bytes),
        bytes: 15,
        mediaType: 'text/plain',
        visibility: 'ui',
      })
      // The same bytes again, from another action and another run: the same ref, a listing each.
      assert.deepEqual(
        await store.putArtifact!({ runId: 'r1', actionId: 's2.a1', bytes: text('hello artifacts'), mediaType: 'text/plain' }),
        first,
      )
      assert.deepEqual(await store.putArtifact!({ runId: 'r2', bytes, mediaType: 'text/plain' }), first)
      // Listed once per (run, ref, action): a second put of the same listing adds none.
      await store.putArtifact!({ runId: 'r1', actionId: 's1.a1', bytes, mediaType: 'text/plain' })
      const other = await store.putArtifact!({ runId: 'r1', bytes: text('{"a":1}'), mediaType: 'application/json; charset=utf-8' })
      assert.deepEqual(
        (await store.artifactsOf!('r1')).map((a) => [a.ref, a.actionId, a.runId, a.mediaType, a.bytes]),
        [
          [first.ref, 's1.a1', 'r1', 'text/plain', 15],
          [first.ref, 's2.a1', 'r1', 'text/plain', 15],
          [other.ref, undefined, 'r1', 'application/json; charset=utf-8', 7],
        ],
      )
      assert.deepEqual(
        (await store.artifactsOf!('r2')).map((a) => [a.ref, a.actionId]),
        [[first.ref, undefined]],
      )
      const stored = await store.artifact!(first.ref)
      assert.deepEqual({ ...stored, createdAt: 0 }, { ...first, runId: 'r1', actionId: 's1.a1', createdAt: 0 })
      assert.equal(typeof stored?.createdAt, 'number')
      assert.deepEqual(await store.readArtifact!(first.ref), bytes)
      assert.ok((await store.readArtifact!(first.ref)) instanceof Uint8Array)
    })

    it('keeps what it stored and what it returned apart from the caller', async () => {
      const store = await withRuns()
      const bytes = text('abc')
      const ref = await store.putArtifact!({ runId: 'r1', bytes, mediaType: 'text/plain' })
      bytes[0] = 0x7a
      const read = await store.readArtifact!(ref.ref)
      assert.deepEqual(read, text('abc'))
      read[1] = 0x7a
      assert.deepEqual(await store.readArtifact!(ref.ref), text('abc'))
    })

    it('keeps an audit blob apart from a ui blob of the same bytes', async () => {
      const store = await withRuns()
      const bytes = text('secret=hunter2')
      const ui = await store.putArtifact!({ runId: 'r1', bytes, mediaType: 'text/plain' })
      const audit = await store.putArtifact!({ runId: 'r1', bytes, mediaType: 'text/plain', visibility: 'audit' })
      assert.equal(audit.ref, `audit:sha256:${sha(bytes)}`)
      assert.equal(audit.visibility, 'audit')
      assert.notEqual(ui.ref, audit.ref)
      assert.equal(ui.sha256, audit.sha256)
      assert.equal((await store.artifact!(audit.ref))?.visibility, 'audit')
      assert.equal((await store.artifact!(ui.ref))?.visibility, 'ui')
      assert.deepEqual(
        (await store.artifactsOf!('r1')).map((a) => a.ref),
        [ui.ref, audit.ref],
      )
      assert.deepEqual(await store.readArtifact!(audit.ref), bytes)
    })

    it('reads ranges: fewer bytes at the end, none beyond it; a bad range is invalid_input', async () => {
      const store = await withRuns()
      const { ref } = await store.putArtifact!({ runId: 'r1', bytes: text('0123456789'), mediaType: 'text/plain' })
      const read = async (offset: number, length: number) => new TextDecoder().decode(await store.readArtifact!(ref, { offset, length }))
      assert.equal(await read(0, 4), '0123')
      assert.equal(await read(3, 4), '3456')
      assert.equal(await read(8, 5), '89')
      assert.equal(await read(10, 5), '')
      assert.equal(await read(100, 5), '')
      assert.equal(await read(2, 0), '')
      for (const range of [
        { offset: -1, length: 1 },
        { offset: 0, length: -1 },
        { offset: 0.5, length: 1 },
        { offset: 0, length: 16 * 1024 * 1024 + 1 },
        { offset: 0 },
        { offset: '0', length: 1 },
        null,
      ])
        await assert.rejects(store.readArtifact!(ref, range as never), { code: 'invalid_input' }, JSON.stringify(range))
      // 16 MiB is the most one read returns, and may be asked for.
      assert.equal(await read(0, 16 * 1024 * 1024), '0123456789')
    })

    it('says artifact_not_found for an unknown ref and invalid_input for a malformed one', async () => {
      const store = await withRuns()
      const unknown = `artifact:sha256:${'0'.repeat(64)}`
      assert.equal(await store.artifact!(unknown), undefined)
      await assert.rejects(store.readArtifact!(unknown), { code: 'artifact_not_found' })
      await assert.rejects(store.readArtifact!(unknown, { offset: 0, length: 1 }), { code: 'artifact_not_found' })
      // An audit ref for content kept only as ui is unknown too: the ref names the visibility.
      const { sha256 } = await store.putArtifact!({ runId: 'r1', bytes: text('x'), mediaType: 'text/plain' })
      await assert.rejects(store.readArtifact!(`audit:sha256:${sha256}`), { code: 'artifact_not_found' })
      assert.equal(await store.artifact!(`audit:sha256:${sha256}`), undefined)
      for (const bad of [
        '',
        `sha256:${sha256}`,
        `artifact:sha256:${sha256.toUpperCase()}`,
        `artifact:sha256:${sha256.slice(1)}`,
        `artifact:md5:${sha256}`,
        `artifact:sha256:${sha256}' OR '1'='1`,
        42,
      ]) {
        await assert.rejects(store.readArtifact!(bad as string), { code: 'invalid_input' }, String(bad))
        await assert.rejects(store.artifact!(bad as string), { code: 'invalid_input' }, String(bad))
      }
      assert.deepEqual(await store.artifactsOf!('r2'), [])
      await assert.rejects(store.artifactsOf!('nope'), { code: 'run_not_found' })
    })

    it("refuses an artifact without the kernel's writer, for an unknown run, too large or malformed; storing nothing", async () => {
      const store = await withRuns()
      const bytes = text('forged')
      const ref = `artifact:sha256:${sha(bytes)}`
      for (const writer of [undefined, { writer: 'cordage-kernel' }])
        await assert.rejects(store.raw.putArtifact!({ runId: 'r1', bytes, mediaType: 'text/plain' }, writer as never), {
          code: 'store_write_refused',
        })
      await assert.rejects(store.putArtifact!({ runId: 'nope', bytes, mediaType: 'text/plain' }), { code: 'run_not_found' })
      assert.equal(await store.artifact!(ref), undefined)
      await assert.rejects(store.readArtifact!(ref), { code: 'artifact_not_found' })
      const tooBig = new Uint8Array(64 * 1024 * 1024 + 1)
      await assert.rejects(store.putArtifact!({ runId: 'r1', bytes: tooBig, mediaType: 'application/octet-stream' }), (e: CordageError) => {
        assert.equal(e.code, 'invalid_input')
        assert.match(e.message, /64 MiB/)
        return true
      })
      const bads: unknown[] = [
        { runId: 'r1', bytes: 'text', mediaType: 'text/plain' },
        { runId: 'r1', bytes: [1, 2], mediaType: 'text/plain' },
        { runId: 'r1', bytes, mediaType: 'text' },
        { runId: 'r1', bytes, mediaType: '' },
        { runId: 'r1', bytes, mediaType: `text/${'x'.repeat(100)}` },
        { runId: 'r1', bytes, mediaType: 'text/plain\nX: y' },
        { runId: 'r1', bytes, mediaType: 'text/plain', visibility: 'model' },
        { runId: 'r1', bytes, mediaType: 'text/plain', actionId: '' },
        { runId: '', bytes, mediaType: 'text/plain' },
      ]
      for (const bad of bads) await assert.rejects(store.putArtifact!(bad as never), { code: 'invalid_input' }, JSON.stringify(bad))
      assert.deepEqual(await store.artifactsOf!('r1'), [])
    })

    it('keeps a blob of 64 MiB exactly, and an empty one', async () => {
      const store = await withRuns()
      const big = new Uint8Array(64 * 1024 * 1024).fill(7)
      const ref = await store.putArtifact!({ runId: 'r1', bytes: big, mediaType: 'application/octet-stream' })
      assert.equal(ref.bytes, big.byteLength)
      assert.equal((await store.readArtifact!(ref.ref, { offset: 64 * 1024 * 1024 - 2, length: 10 })).byteLength, 2)
      const empty = await store.putArtifact!({ runId: 'r1', bytes: new Uint8Array(0), mediaType: 'text/plain' })
      assert.equal(empty.bytes, 0)
      assert.deepEqual(await store.readArtifact!(empty.ref), new Uint8Array(0))
    })

    const { damage, link } = contract
    it('refuses a whole read of a blob whose bytes were changed (store_corrupt), for every listing of it', {
      skip: damage && link ? false : 'this store keeps no bytes that could be damaged',
    }, async () => {
      const store = await withRuns()
      const bytes = text('the original bytes')
      const ref = await store.putArtifact!({ runId: 'r1', actionId: 'a1', bytes, mediaType: 'text/plain' })
      await store.putArtifact!({ runId: 'r2', actionId: 'a2', bytes, mediaType: 'text/plain' })
      const kept = await store.putArtifact!({ runId: 'r1', bytes: text('untouched'), mediaType: 'text/plain' })
      await damage!(
        store.raw,
        `UPDATE artifact_blobs SET body = ${link!(Buffer.from('the forged bytes!!').toString('hex'))} WHERE ref = '${ref.ref}'`,
      )
      await assert.rejects(store.readArtifact!(ref.ref), (e: CordageError) => {
        assert.equal(e.code, 'store_corrupt')
        assert.match(e.message, new RegExp(ref.ref))
        return true
      })
      assert.deepEqual(await store.readArtifact!(kept.ref), text('untouched'))
      // One blob: both listings point at the damaged bytes.
      assert.equal((await store.artifactsOf!('r2'))[0].ref, ref.ref)
      await damage!(store.raw, `UPDATE artifact_blobs SET media_type = 'not a type' WHERE ref = '${kept.ref}'`)
      await assert.rejects(store.artifact!(kept.ref), { code: 'store_corrupt' })
      await assert.rejects(store.artifactsOf!('r1'), { code: 'store_corrupt' })
    })
  })
}
