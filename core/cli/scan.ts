/**
 * @module cli/scan
 * `cordage scan`: searches the stores of a preset's agents for the agents' secrets. Runs scrub their
 * secrets before anything is recorded (core/kit/secrets.ts), so a finding means the record was written
 * before scrubbing (an older Cordage, a secret added to the preset later), or by something else. Each
 * agent's secrets are the ones its runs scrub (host/secrets.ts: the preset's `secrets` and the key
 * variables its plugins' manifests mark secret), read from this environment; every run of every
 * store is searched for all of them, since agents may share a store.
 *
 * What is searched: every event, the run's snapshot, its ledger entries (receipt, output, observation;
 * when the store has the optional `effectsOf`), its artifacts, audit-only ones included
 * (cli/scan-artifacts.ts), and the standing grants. A finding names where (run, seq, JSON path; for an
 * artifact its ref, the event that names it and the byte offset in a text), the secret's name and the
 * form it was found in (as written, base64, hex, percent-encoded), never the value. Exit 0 clean, 1 something found (or a run could not be read),
 * 2 usage (nothing to look for included).
 */
import { CordageError } from '../contracts/errors.ts'
import type { Cordage } from '../host/app.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { SecretFinding } from '../kit/secrets.ts'
import type { StoreService } from '../contracts/services/store.ts'
import type { Parsed } from './args.ts'
import { errorReport } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'
import { scanArtifacts } from './scan-artifacts.ts'

/** One finding, as printed with --json. */
export interface ScanFinding {
  /** The run, for everything but a grant. */
  runId?: string
  /** Where in it: an event (with its seq and type), its snapshot, a ledger entry, an artifact, or a grant. */
  in: 'event' | 'snapshot' | 'ledger' | 'artifact' | 'grant'
  /** For an artifact, the event that names it (absent when none does). */
  seq?: number
  type?: string
  key?: string
  grant?: string
  /** An artifact: its ref and visibility, and the action that stored it. */
  ref?: string
  visibility?: 'ui' | 'audit'
  actionId?: string
  path: string
  /** In a text artifact: the byte offset it starts at. */
  offset?: number
  secret: string
  form: string
}

export async function scan({ flags }: Parsed, io: Output, open: (flags: Parsed['flags']) => Promise<Cordage>): Promise<number> {
  const app = await open(flags)
  try {
    const scrubbers = app
      .agentNames()
      .map((name) => app.agent(name).scrubber)
      .filter((s) => s.active)
    const names = [...new Set(scrubbers.flatMap((s) => s.names))].sort()
    if (!names.length) {
      throw new CordageError(
        'invalid_input',
        `no secrets to look for: none of the agents of ${app.preset.shown} has a secret set in this environment. Set the variables its runs scrub (the preset's top-level secrets, and the key variables of its plugins, such as apiKeyEnv) to their values, then scan again`,
      )
    }
    const found = new Map<string, ScanFinding>()
    const report = (base: Omit<ScanFinding, 'path' | 'secret' | 'form'>, value: unknown) => {
      for (const scrubber of scrubbers) {
        for (const hit of scrubber.find(value)) add(found, base, hit)
      }
    }
    const counts = { runs: 0, events: 0, snapshots: 0, effects: 0, artifacts: 0, grants: 0, unreadable: 0 }
    const seen = new Set<string>()
    const blobs = new Set<string>()
    for (const name of app.agentNames()) {
      const store = app.agent(name).store()
      for (const run of await store.list({ limit: Number.MAX_SAFE_INTEGER })) {
        if (seen.has(run.runId)) continue
        seen.add(run.runId)
        counts.runs++
        try {
          const events = await scanRun(store, run.runId, report, counts)
          const artifacts = await scanArtifacts(store, run.runId, events, scrubbers, blobs)
          counts.artifacts += artifacts.searched
          for (const finding of artifacts.findings) keep(found, finding)
        } catch (error) {
          if (!CordageError.is(error)) throw error
          counts.unreadable++
          if (flags.json) io.err(JSON.stringify({ error: { ...errorReport(error, { command: 'scan', flags }), run: run.runId } }))
          else io.err(`run ${run.runId} could not be read, so it was not searched: error [${error.code}]: ${error.message}`)
        }
      }
      for (const grant of (await store.grants?.({ inactive: true })) ?? []) {
        if (seen.has(`grant:${grant.id}`)) continue
        seen.add(`grant:${grant.id}`)
        counts.grants++
        report({ in: 'grant', grant: grant.id }, grant)
      }
    }
    for (const finding of found.values()) io.out(flags.json ? JSON.stringify(finding) : line(finding))
    const what = `${counts.runs} run(s) (${counts.events} events, ${counts.snapshots} snapshot(s), ${counts.effects} ledger entr${counts.effects === 1 ? 'y' : 'ies'}, ${counts.artifacts} artifact(s)) and ${counts.grants} grant(s) in the stores of ${app.preset.shown}`
    io.err(
      `scanned ${what} for ${names.length} secret(s): ${names.join(', ')}; ${found.size ? `${found.size} finding(s)` : 'none found'}${counts.unreadable ? `; ${counts.unreadable} run(s) could not be read` : ''}`,
    )
    return found.size || counts.unreadable ? ExitCodes.failed : ExitCodes.ok
  } finally {
    await app.stop()
  }
}

type Report = (base: Omit<ScanFinding, 'path' | 'secret' | 'form'>, value: unknown) => void

async function scanRun(
  store: StoreService,
  runId: string,
  report: Report,
  counts: { events: number; snapshots: number; effects: number },
): Promise<RunEvent[]> {
  const events = await store.load(runId)
  for (const event of events) report({ runId, in: 'event', seq: event.seq, type: event.type }, event)
  counts.events += events.length
  // The snapshot is run state reduced from the events: written before scrubbing, it holds what they held.
  const { snapshot } = await store.loadRun(runId)
  if (snapshot) {
    counts.snapshots++
    report({ runId, in: 'snapshot', seq: snapshot.seq }, snapshot.state)
  }
  for (const effect of (await store.effectsOf?.(runId)) ?? []) {
    counts.effects++
    report({ runId, in: 'ledger', key: effect.key }, { receipt: effect.receipt, output: effect.output, observation: effect.observation })
  }
  return events
}

function add(found: Map<string, ScanFinding>, base: Omit<ScanFinding, 'path' | 'secret' | 'form'>, hit: SecretFinding): void {
  keep(found, { ...base, path: hit.path, secret: hit.name, form: hit.form })
}

/** One finding once, however many agents' scrubbers found it. */
function keep(found: Map<string, ScanFinding>, finding: ScanFinding): void {
  const id = JSON.stringify([
    finding.runId,
    finding.in,
    finding.seq,
    finding.key,
    finding.grant,
    finding.ref,
    finding.path,
    finding.offset,
    finding.secret,
    finding.form,
  ])
  if (!found.has(id)) found.set(id, finding)
}

function line(f: ScanFinding): string {
  const where =
    f.in === 'event'
      ? `run ${f.runId} seq ${f.seq} ${f.type}`
      : f.in === 'snapshot'
        ? `run ${f.runId} snapshot at seq ${f.seq}`
        : f.in === 'ledger'
          ? `run ${f.runId} ledger ${f.key}`
          : f.in === 'artifact'
            ? `run ${f.runId} artifact ${f.ref} (${artifactPlace(f)})`
            : `grant ${f.grant}`
  return `${where} ${f.path}${f.offset !== undefined ? ` at byte ${f.offset}` : ''}: ${f.secret} (${f.form})`
}

/** Which kind of artifact, and the event that names it (or the action it is listed for). */
function artifactPlace(f: ScanFinding): string {
  const audit = f.visibility === 'audit' ? 'audit-only; ' : ''
  if (f.seq !== undefined) return `${audit}${f.type} of ${f.actionId ?? 'no action'} at seq ${f.seq}`
  return `${audit}listed${f.actionId ? ` for ${f.actionId}` : ''}, named by no event`
}
