/**
 * @module cli/commands/artifacts
 * `cordage artifacts RUN`: the artifacts a run stored (large results, and audit-only raw results of
 * redacted calls), and `cordage artifact REF`: one artifact's bytes. The UI view never shows an
 * audit-only artifact's bytes: `cordage artifact` refuses one (`artifact_forbidden`) unless `--audit`
 * asks for the audit view (docs/concepts/artifacts.md).
 */
import { CordageError } from '../../contracts/errors.ts'
import type { StoredArtifact } from '../../contracts/services/store.ts'
import type { Cordage } from '../../host/app.ts'
import { parseArtifactRef } from '../../kit/store-threads.ts'
import { ExitCodes } from '../exit-codes.ts'
import { checkOutPath, writeOut } from '../out-path.ts'
import { knownAgent, locate, open } from '../open.ts'
import type { Handler } from '../output.ts'

/** The most bytes `cordage artifact` prints or writes in one go (a store reads at most this much at once). */
const MaxRead = 16 * 1024 * 1024

export const artifacts: Handler = async ({ flags, positionals: [runId] }, io) => {
  const app = await open(io, flags, 'stores')
  try {
    const agent = await locate(app, runId, flags.agent as string | undefined)
    const store = agent.store()
    if (!store.artifactsOf) throw unsupported(agent.name)
    const rows = await store.artifactsOf(runId)
    if (flags.json) for (const a of rows) io.out(JSON.stringify(a))
    else if (rows.length === 0) io.err(`run ${runId} stored no artifacts`)
    else
      for (const a of rows)
        io.out(`${a.ref}  ${String(a.bytes).padStart(9)} B  ${a.mediaType}  ${a.actionId ?? '-'}  ${a.visibility ?? 'ui'}`)
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

export const artifact: Handler = async ({ flags, positionals: [ref] }, io) => {
  const offset = whole(flags.offset, '--offset', 0)
  const length = whole(flags.length, '--length', undefined)
  if (length !== undefined && (length < 1 || length > MaxRead))
    throw new CordageError('invalid_input', `--length must be between 1 and ${MaxRead} bytes, got ${length}`)
  // Where the bytes go, before the store is opened or the reference read.
  const out = flags.out === undefined ? undefined : checkOutPath('--out', flags.out)
  // The preset and the agent first, as every command checks them: a bad preset is the first thing to fix.
  const app = await open(io, flags, 'stores')
  try {
    if (typeof flags.agent === 'string') knownAgent(app, flags.agent)
    let parsed: ReturnType<typeof parseArtifactRef>
    try {
      parsed = parseArtifactRef(ref)
    } catch (error) {
      throw new CordageError('invalid_input', (error as Error).message)
    }
    const found = await find(app, parsed.ref, flags.run as string | undefined, flags.agent as string | undefined)
    // Audit-only content is for the audit view, asked for by name: never shown by default.
    if (found.meta.visibility === 'audit' && !flags.audit)
      throw new CordageError(
        'artifact_forbidden',
        `${parsed.ref} is audit-only (the raw result of a call a guardrail redacted): print it with --audit, in the audit view`,
      )
    if (offset > found.meta.bytes)
      throw new CordageError('invalid_input', `--offset ${offset} is past the end of ${parsed.ref} (${found.meta.bytes} bytes)`)
    const want = Math.min(length ?? found.meta.bytes - offset, found.meta.bytes - offset)
    if (want > MaxRead)
      throw new CordageError(
        'invalid_input',
        `${parsed.ref} holds ${found.meta.bytes} bytes: print at most ${MaxRead} at once (--offset, --length)`,
      )
    // The whole artifact is checked against its hash as it is read; a range cannot be.
    const bytes =
      offset === 0 && want === found.meta.bytes ? await found.read(parsed.ref) : await found.read(parsed.ref, { offset, length: want })
    if (out) {
      writeOut(out, bytes)
      io.err(`wrote ${bytes.byteLength} bytes of ${parsed.ref} to ${flags.out}`)
    } else if (io.write) io.write(Buffer.from(bytes).toString('utf8'))
    else io.out(Buffer.from(bytes).toString('utf8'))
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

interface Found {
  meta: StoredArtifact
  read(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array>
}

/** The artifact in the stores of the preset's agents (of the run's agent, and listed under the run, with --run). */
async function find(app: Cordage, ref: string, runId: string | undefined, name: string | undefined): Promise<Found> {
  if (name) knownAgent(app, name)
  const agents = runId ? [await locate(app, runId, name)] : (name ? [name] : app.agentNames()).map((n) => app.agent(n))
  let supported = false
  for (const agent of agents) {
    const store = agent.store()
    if (!store.artifact || !store.readArtifact || !store.artifactsOf) continue
    supported = true
    const meta = runId ? (await store.artifactsOf(runId)).find((a) => a.ref === ref) : await store.artifact(ref)
    if (meta) return { meta, read: (r, range) => store.readArtifact!(r, range) }
  }
  if (!supported) throw unsupported(agents.map((a) => a.name).join(', '))
  throw new CordageError(
    'artifact_not_found',
    `no artifact ${ref}${runId ? ` listed under run ${runId}` : ''} in the stores of ${app.preset.shown}`,
  )
}

function unsupported(agent: string): CordageError {
  return new CordageError(
    'feature_unsupported',
    `the store of agent ${agent} keeps no artifacts (store contract 2.3.0: store-memory, store-sqlite, store-postgres)`,
  )
}

function whole<T extends number | undefined>(value: unknown, flag: string, fallback: T): number | T {
  if (value === undefined) return fallback
  const n = Number(value)
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new CordageError('invalid_input', `${flag} must be a whole number ≥ 0, got ${JSON.stringify(value)}`)
  return n
}
