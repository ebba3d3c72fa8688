/**
 * @module playground/artifacts-api
 * The UI view of artifacts (docs/concepts/artifacts.md): `GET /api/runs/RUN/artifacts` lists what a run
 * stored, and `GET /api/artifacts/REF?offset&length` reads a range of one. Audit-only artifacts (the raw
 * results of calls a guardrail redacted) are never shown here: their listings are counted, not listed,
 * and reading one answers 403 `artifact_forbidden`. The audit view is `cordage artifact REF --audit`.
 */
import type { ServerResponse } from 'node:http'
import { CordageError, parseArtifactRef, type StoredArtifact } from 'cordage'
import { HttpError, locate, sendJson, type ApiContext } from './api.ts'

/** Bytes a read returns when the request does not say, and the most it may ask. */
const DefaultLength = 64 * 1024
const MaxLength = 1024 * 1024

export const artifactHandlers = {
  async list(ctx: ApiContext, res: ServerResponse, runId: string) {
    const agent = await locate(ctx.app, runId)
    const store = agent.store()
    if (!store.artifactsOf) return sendJson(res, 200, { runId, artifacts: [], supported: false })
    const all = await store.artifactsOf(runId)
    const shown = all.filter((a) => a.visibility !== 'audit')
    sendJson(res, 200, { runId, artifacts: shown, auditOnly: all.length - shown.length, supported: true })
  },

  async read(ctx: ApiContext, res: ServerResponse, ref: string, url: URL) {
    let parsed: ReturnType<typeof parseArtifactRef>
    try {
      parsed = parseArtifactRef(ref)
    } catch (error) {
      throw new HttpError(400, 'invalid_input', (error as Error).message)
    }
    if (parsed.visibility === 'audit')
      throw new CordageError(
        'artifact_forbidden',
        `${parsed.ref} is audit-only (the raw result of a call a guardrail redacted): the playground never shows it; the audit view is cordage artifact REF --audit`,
      )
    const offset = whole(url.searchParams.get('offset'), 'offset', 0)
    const length = whole(url.searchParams.get('length'), 'length', DefaultLength)
    if (length < 1 || length > MaxLength)
      throw new HttpError(400, 'invalid_input', `length must be between 1 and ${MaxLength}, got ${length}`)
    for (const name of ctx.app.agentNames()) {
      const store = ctx.app.agent(name).store()
      if (!store.artifact || !store.readArtifact) continue
      const meta: StoredArtifact | undefined = await store.artifact(parsed.ref)
      if (!meta) continue
      if (offset > meta.bytes)
        throw new HttpError(400, 'invalid_input', `offset ${offset} is past the end of ${parsed.ref} (${meta.bytes} bytes)`)
      const want = Math.min(length, meta.bytes - offset)
      const bytes = want === 0 ? new Uint8Array() : await store.readArtifact(parsed.ref, { offset, length: want })
      const next = offset + bytes.byteLength
      return sendJson(res, 200, {
        ref: parsed.ref,
        mediaType: meta.mediaType,
        offset,
        bytes: bytes.byteLength,
        total: meta.bytes,
        text: new TextDecoder().decode(bytes),
        ...(next < meta.bytes ? { next } : {}),
      })
    }
    throw new CordageError('artifact_not_found', `no artifact ${parsed.ref} in the stores of this preset`)
  },
}

function whole(value: string | null, name: string, fallback: number): number {
  if (value === null) return fallback
  if (!/^\d{1,15}$/.test(value))
    throw new HttpError(400, 'invalid_input', `${name} must be a whole number ≥ 0, got ${JSON.stringify(value.slice(0, 40))}`)
  return Number(value)
}
