/**
 * @module cli/lock
 * `cordage lock --preset FILE`: resolve every agent of the preset as if it had no lock (its ranges,
 * layers included), and write the lock beside it (host/lock.ts): each plugin's exact version and the
 * content hash of its folder. Run it again to update the lock. The preset itself is never written.
 */
import { relative } from 'node:path'
import { PluginCatalog } from '../host/catalog.ts'
import { lockOf, readLock, writeLock, type LockFile } from '../host/lock.ts'
import { loadPreset } from '../host/preset.ts'
import { planAgent } from '../host/resolve.ts'

/** Write the lock of `file`; returns the lines to print (readable, or JSON rows). */
export async function lockPreset(file: string, json: boolean): Promise<string[]> {
  const preset = loadPreset(file)
  const catalog = await PluginCatalog.scan()
  const plans = []
  for (const spec of Object.values(preset.agents)) plans.push(await planAgent(preset, spec, catalog))
  let previous: LockFile | undefined
  try {
    previous = readLock(preset.file)?.lock
  } catch {
    previous = undefined // an unreadable lock is replaced, which is what was asked
  }
  const lock = lockOf(preset, plans)
  const path = writeLock(preset.file, lock)
  const written = relative(process.cwd(), path) || path
  const lines: string[] = []
  for (const [agent, plugins] of Object.entries(lock.agents)) {
    if (json) {
      lines.push(JSON.stringify({ agent, plugins }))
      continue
    }
    // The content hash, the one runs record: not the bundle hash `cordage dev` shows (docs/reference/hashes.md).
    lines.push(`agent ${agent} (exact version and content hash of each plugin):`)
    for (const [name, p] of Object.entries(plugins)) {
      const was =
        previous && Object.hasOwn(previous.agents, agent) && Object.hasOwn(previous.agents[agent] ?? {}, name)
          ? previous.agents[agent][name]
          : undefined
      const change = !previous
        ? ''
        : !was
          ? '  (new)'
          : was.version !== p.version
            ? `  (was ${was.version})`
            : was.hash !== p.hash
              ? '  (files changed)'
              : ''
      lines.push(`  ${`${name}@${p.version}`.padEnd(28)} ${p.hash}${change}`)
    }
  }
  lines.push(json ? JSON.stringify({ lock: written }) : `${previous ? 'updated' : 'wrote'} ${written}`)
  return lines
}
