/**
 * The files under a workspace folder, in a stable order (sorted, depth first), bounded by a count.
 * Symbolic links are not followed (a linked folder could lead anywhere, or in circles), ignored names
 * are skipped at any depth, and the harness's `.cordage/` at the root is never listed.
 */
import { readdir } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { ReservedDir } from './workspace-path.ts'

export interface Walked {
  /** Paths relative to the workspace root, with `/`. */
  files: string[]
  /** More files exist than `limit`. */
  truncated: boolean
}

export async function walkFiles(root: string, start: string, ignore: readonly string[], limit: number): Promise<Walked> {
  const files: string[] = []
  const skip = new Set(ignore)
  const visit = async (dir: string): Promise<boolean> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (skip.has(entry.name)) continue
      const path = join(dir, entry.name)
      const rel = relative(root, path)
      if (rel === ReservedDir) continue
      if (entry.isDirectory()) {
        if (!(await visit(path))) return false
      } else if (entry.isFile()) {
        if (files.length >= limit) return false
        files.push(rel.split(sep).join('/'))
      }
    }
    return true
  }
  const complete = await visit(start)
  return { files, truncated: !complete }
}
