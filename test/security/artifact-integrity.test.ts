/**
 * `cordage verify RUN` covers the artifacts a run references, on store-sqlite and store-postgres: the
 * chained `tool/end` names each blob's ref, sha256, size and media type, so a blob rewritten, removed
 * or relabelled behind the store's back makes the run NOT INTACT, naming the artifact, the run and the
 * seq of the event that names it (exit 1, `error [store_corrupt]`). The blobs are edited with SQL on
 * the database (the SQLite file, or PostgreSQL), as someone who can write it would.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { IntegrityLab, storeKinds } from './integrity-lab.ts'
import { vaultPreset } from './vault-preset.ts'

const labs: IntegrityLab[] = []
after(async () => {
  for (const lab of labs) await lab.close()
})

/** A desk whose run stored a ui artifact (the export) and an audit-only one (the raw customer record). */
async function deskRun(kind: 'sqlite' | 'postgres') {
  const lab = new IntegrityLab(kind)
  labs.push(lab)
  lab.writePreset(vaultPreset(lab))
  const run = await lab.run()
  assert.equal(run.code, 0, run.stderr)
  const ends = run.events.filter((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')
  const exported = ends.find((e) => e.data.artifact)!
  const redacted = ends.find((e) => e.data.redacted?.audit)!
  assert.ok(exported && redacted, 'the run stored a ui and an audit-only artifact')
  return {
    lab,
    runId: run.runId,
    ui: { seq: exported.seq, actionId: exported.actionId!, ref: exported.data.artifact!.ref },
    audit: { seq: redacted.seq, actionId: redacted.actionId!, ref: redacted.data.redacted!.audit!.ref },
  }
}

async function blobOf(lab: IntegrityLab, ref: string): Promise<Buffer> {
  const [row] = await lab.sql('SELECT body FROM artifact_blobs WHERE ref = ?', ref)
  return Buffer.from(row.body as Uint8Array)
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

for (const { kind, skip } of storeKinds) {
  describe(`cordage verify and the artifacts of a run (store-${kind})`, { skip }, () => {
    it('passes a run whose artifacts are as its events name them, and counts them', async () => {
      const { lab, runId, ui, audit } = await deskRun(kind)
      const result = await lab.cli(['verify', runId])
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, new RegExp(`^run ${runId}: intact: `))
      assert.match(
        result.stdout,
        /\n {2}2 artifact\(s\) named by its events, each stored whole with the sha256, size and media type its event names\n/,
      )
      const json = JSON.parse((await lab.cli(['verify', runId, '--json'])).stdout)
      assert.equal(json.intact, true)
      assert.deepEqual(
        json.artifacts.map((a: { ref: string; seq: number; actionId: string }) => [a.ref, a.seq, a.actionId]),
        [
          [ui.ref, ui.seq, ui.actionId],
          [audit.ref, audit.seq, audit.actionId],
        ],
      )
    })

    it('fails after a blob was rewritten in place, naming the artifact, the run and the seq of its tool/end', async () => {
      const { lab, runId, ui } = await deskRun(kind)
      const body = await blobOf(lab, ui.ref)
      // Same size, one byte changed: a store that checks sizes only would not see it.
      const edited = Buffer.from(body.toString('utf8').replace('line one', 'line 0ne'), 'utf8')
      assert.equal(edited.length, body.length)
      await lab.sql('UPDATE artifact_blobs SET body = ? WHERE ref = ?', edited, ui.ref)

      const result = await lab.cli(['verify', runId])
      assert.equal(result.code, 1, result.stderr)
      assert.match(
        result.stdout,
        new RegExp(
          `^run ${runId}: NOT INTACT at seq ${ui.seq}: artifact ${ui.ref} \\(tool/end of ${ui.actionId}\\): its stored bytes hash to sha256 ${sha256(edited)}, not the ${ui.ref.slice(-64)} its event names`,
        ),
      )
      assert.match(result.stderr, new RegExp(`^error \\[store_corrupt\\]: run ${runId}, seq ${ui.seq}: artifact ${ui.ref} `))
      assert.doesNotMatch(result.stderr, /\n\s+at /)
      const json = await lab.cli(['verify', runId, '--json'])
      assert.equal(json.code, 1)
      const check = JSON.parse(json.stdout)
      assert.equal(check.intact, false)
      assert.deepEqual([check.firstBad.seq, check.firstBad.ref], [ui.seq, ui.ref])
    })

    it('names every bad artifact: an audit-only blob rewritten with its size, and a blob removed', async () => {
      const { lab, runId, ui, audit } = await deskRun(kind)
      const raw = await blobOf(lab, audit.ref)
      assert.match(raw.toString('utf8'), /4111 1111 1111 1111/, 'the audit artifact keeps the raw record')
      const forged = Buffer.from(raw.toString('utf8').replace('plan gold', 'plan platinum'), 'utf8')
      await lab.sql('UPDATE artifact_blobs SET body = ?, size = ? WHERE ref = ?', forged, forged.length, audit.ref)
      await lab.sql('DELETE FROM artifact_blobs WHERE ref = ?', ui.ref)

      const result = await lab.cli(['verify', runId])
      assert.equal(result.code, 1, result.stderr)
      const lines = result.stdout.split('\n')
      assert.match(
        lines[0],
        new RegExp(
          `^run ${runId}: NOT INTACT at seq ${ui.seq}: artifact ${ui.ref} \\(tool/end of ${ui.actionId}\\): it is not in the store`,
        ),
      )
      assert.ok(
        lines.some((l) =>
          new RegExp(
            `^ {2}also at seq ${audit.seq}: artifact ${audit.ref} \\(tool/end of ${audit.actionId}\\): its stored size is ${forged.length} bytes, not the ${raw.length} its event names`,
          ).test(l),
        ),
        result.stdout,
      )
      const check = JSON.parse((await lab.cli(['verify', runId, '--json'])).stdout)
      assert.deepEqual(
        check.problems.map((p: { seq: number; ref: string }) => [p.seq, p.ref]),
        [
          [ui.seq, ui.ref],
          [audit.seq, audit.ref],
        ],
      )
    })
  })
}
