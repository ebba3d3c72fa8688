/**
 * @module cli/dev-output
 * What `cordage dev` prints, shared with `cordage playground --watch` (main.ts) so both commands print
 * the same lines: the folders watched, each plugin reload, each reload of the preset.
 */
import { relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { PluginEvent } from '../contracts/events.ts'
import type { DevReloader } from '../host/dev.ts'
import type { PresetReload } from '../host/preset-reload.ts'
import type { Parsed } from './args.ts'
import type { Output } from './output.ts'

/**
 * A reload of the preset: what was swapped (stdout), or why nothing changed (stderr), or that its edits
 * are no longer followed (`watch_failed`, stderr); with `json`, as a `preset/reloaded` line on stdout.
 */
export function printPreset(result: PresetReload, shown: string, io: Output, json = false): void {
  if (json) io.out(JSON.stringify({ type: 'preset/reloaded', ...result }))
  else if (result.ok && result.replan) io.out(`preset ${shown} reloaded: ${result.replan.join('; ')}: agents planned again and restarted`)
  else if (result.code === 'watch_failed')
    io.err(`preset ${shown} [watch_failed]: ${result.message}\n  the agents keep running on the preset they were running`)
  else if (result.ok)
    for (const s of result.swapped)
      io.out(`preset ${shown}: reloaded ${s.name} in ${s.agent} (${s.changed.join(', ')}): ${s.from} → ${s.to}`)
  else
    io.err(
      result.partial
        ? `preset ${shown} edit applied only IN PART${result.code ? ` [${result.code}]` : ''}: ${result.message}\n  the agents run neither the old preset nor the edited one until it is planned again`
        : `preset ${shown} edit not applied${result.code ? ` [${result.code}]` : ''}: ${result.message}\n  the agents keep running on the preset they were running`,
    )
}

/**
 * The `--debounce MS` flag (default 50).
 * @throws CordageError `invalid_input` when it is not a whole number ≥ 0
 */
export function debounceOf(flags: Parsed['flags']): number {
  const debounceMs = flags.debounce === undefined ? 50 : Number(flags.debounce)
  if (!Number.isInteger(debounceMs) || debounceMs < 0)
    throw new CordageError('invalid_input', `--debounce must be a whole number of milliseconds ≥ 0, got ${JSON.stringify(flags.debounce)}`)
  return debounceMs
}

/** The folders watched, on stderr: `watching N plugin folder(s) of PRESET (Ctrl-C to stop):`, then one line per folder with its users. */
export function printWatching(reloader: DevReloader, io: Output): void {
  const folders = [...reloader.folders.values()]
  io.err(`watching ${folders.length} plugin folder(s) of ${reloader.app.preset.shown} (Ctrl-C to stop):`)
  for (const folder of folders)
    io.err(`  ${relative(process.cwd(), folder.dir) || '.'}  ${folder.users.map((u) => `${u.agent}:${u.name}`).join(', ')}`)
}

/** One reload: a line on stdout when it worked, the error and what keeps serving on stderr when not; with `json`, the event as JSON on stdout. */
export function printReload(event: PluginEvent, io: Output, json = false): void {
  if (json) io.out(JSON.stringify({ type: 'plugin/reloaded', ...event }))
  else if (event.ok)
    io.out(
      `reloaded ${event.name} in ${event.agent}: ${event.from?.version} → ${event.to?.version}  bundle ${short(event.from?.hash)} → ${short(event.to?.hash)}  ${event.durationMs}ms`,
    )
  else
    io.err(
      `reload of ${event.name} failed in ${event.agent} [${event.code}]: ${event.message}${event.failClosed ? '' : `\n  ${event.name}@${event.version} (bundle ${short(event.from?.hash)}) keeps serving`}`,
    )
}

/** A bundle hash (of the code a reload built), not the content hash a lock and a run record: docs/reference/hashes.md. */
function short(hash: string | undefined): string {
  return hash ? hash.slice(0, 15) : 'unknown'
}
