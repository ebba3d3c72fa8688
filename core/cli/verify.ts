/**
 * @module cli/verify
 * `cordage verify RUN`: asks the store that holds a run to check its stored history (the store's
 * optional `verify`, core/kit/store-kit.ts): every event parses, is numbered 1..n, belongs to the run, and
 * matches its link in the hash chain. Prints what was checked and the head hash (to keep elsewhere as
 * an anchor), or the first bad seq and why. Exit 0 intact, 1 damaged (`store_corrupt`), 2 usage.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Cordage } from '../host/app.ts'
import type { HistoryCheck } from '../contracts/services/store.ts'
import { storeCorrupt } from '../kit/store-kit.ts'
import type { Parsed } from './args.ts'
import { reportError } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

export async function verify(
  { flags, positionals: [runId] }: Parsed,
  io: Output,
  open: (flags: Parsed['flags']) => Promise<Cordage>,
): Promise<number> {
  const app = await open(flags)
  try {
    const { agent, check } = await checkRun(app, runId)
    if (flags.json) io.out(JSON.stringify({ ...check, agent, intact: !check.firstBad }))
    else for (const line of describe(check)) io.out(line)
    if (!check.firstBad) return ExitCodes.ok
    const error = storeCorrupt(runId, check.firstBad.seq, check.firstBad.problem)
    reportError(io, error, { command: 'verify', flags, json: !!flags.json })
    return ExitCodes.failed
  } finally {
    await app.stop()
  }
}

/** The check of the first agent's store that has the run. */
async function checkRun(app: Cordage, runId: string): Promise<{ agent: string; check: HistoryCheck }> {
  let notFound: unknown
  for (const name of app.agentNames()) {
    const store = app.agent(name).store()
    if (!store.verify) {
      // Only a store that has the run can say it cannot check it.
      try {
        await store.read(runId, { limit: 1 })
      } catch (error) {
        if (CordageError.is(error, 'run_not_found')) {
          notFound = error
          continue
        }
        throw error
      }
      const plugin =
        Object.entries(app.pluginsOf(name))
          .map(([n, v]) => `${n}@${v}`)
          .find((p) => /store/.test(p)) ?? 'its store'
      throw new CordageError(
        'invalid_input',
        `run ${runId} is in the store of agent "${name}" (${plugin}), which cannot check a run's history (the store contract's optional verify, since 2.2.0)`,
      )
    }
    try {
      return { agent: name, check: await store.verify(runId) }
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
      notFound = error
    }
  }
  throw notFound ?? new CordageError('run_not_found', `no run ${runId} in the stores of ${app.preset.shown}`)
}

/** Readable lines: what holds, how far the chain reaches, and the head. */
function describe(check: HistoryCheck): string[] {
  const { runId, events } = check
  if (check.firstBad) {
    return [
      `run ${runId}: NOT INTACT at seq ${check.firstBad.seq}: ${check.firstBad.problem}`,
      `  ${events} event(s) stored. Do not resume the run until you know why; if it was damaged or edited, restore the store from a backup`,
    ]
  }
  const numbered = `${events} event(s), numbered 1..${events}, each parsed and of this run`
  if (!check.chained) {
    return [
      `run ${runId}: intact as far as its store can tell: ${numbered}`,
      '  not chained: this store keeps events as objects, not text, and does not chain them (store-memory)',
    ]
  }
  const how = check.keyed
    ? 'under the key (HMAC-SHA-256): an edit cannot be chained again without it'
    : '(SHA-256, no key: this detects damage and edits that did not recompute the chain; anyone who can write the store can recompute it, so compare the head with a copy kept elsewhere, or set a key)'
  const unchained = check.unchainedUpTo ?? 0
  const why = 'stored before this store chained events, or their links were removed; checked for numbering and parsing only'
  if (unchained >= events)
    return [`run ${runId}: NOT CHAINED: ${numbered}`, `  not chained up to seq ${unchained}: ${why}; nothing proves they were not edited`]
  const lines = [`run ${runId}: intact: ${numbered}`]
  if (unchained > 0) lines.push(`  not chained up to seq ${unchained}: ${why}`)
  lines.push(`  seq ${unchained + 1}..${events} each chained to the one before ${how}`)
  lines.push(`  head ${check.head}`)
  return lines
}
