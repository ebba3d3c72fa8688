/**
 * The order test/run.ts starts files in. Started in name order, a long file that sorts late starts
 * while the others are nearly done, and the suite ends waiting on it alone; started longest first,
 * the short ones fill the gaps at the end. test/durations.json remembers how long each file took
 * (file → seconds, from `test/run.ts --record-durations`).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export type Durations = Map<string, number>

/**
 * The durations file. Anything but an object of file → seconds (a broken merge, a hand edit) makes
 * it unusable as a whole rather than half-read: `problem` says why, and the caller keeps name order.
 */
export function readDurations(path: string): { durations: Durations; problem?: string } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    return { durations: new Map(), problem: `cannot read it (${(error as NodeJS.ErrnoException).code ?? error})` }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { durations: new Map(), problem: `it is not JSON (${(error as Error).message})` }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { durations: new Map(), problem: 'it is not an object of file → seconds' }
  const durations: Durations = new Map()
  for (const [file, seconds] of Object.entries(parsed)) {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
      return { durations: new Map(), problem: `the entry of ${file} is not a number of seconds >= 0` }
    durations.set(file, seconds)
  }
  return { durations }
}

/**
 * `files` (in name order) longest first. A file without a duration (a new one) is guessed from its
 * size, at the median seconds per byte of the files that have one, but never longer than the median
 * of their durations: the long files are few and known, and a guess must not start a new file before
 * them (with only a few known, every file guessed from their rate would look long). With none known,
 * larger files first. Ties: a known file first, then name order.
 */
export function longestFirst(files: string[], durations: Durations, size: (file: string) => number): string[] {
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const known = files.filter((f) => durations.has(f))
  const rate = known.length ? (median(known.filter((f) => size(f) > 0).map((f) => durations.get(f)! / size(f))) ?? 0) : 1
  const cap = known.length ? median(known.map((f) => durations.get(f)!)) : Number.POSITIVE_INFINITY
  const isKnown = (file: string) => Number(durations.has(file))
  const guess = new Map(files.map((f) => [f, durations.get(f) ?? Math.min(size(f) * rate, cap)]))
  return files
    .map((file, index) => ({ file, index }))
    .sort((a, b) => guess.get(b.file)! - guess.get(a.file)! || isKnown(b.file) - isKnown(a.file) || a.index - b.index)
    .map(({ file }) => file)
}

/** The size of `file` under `root` in bytes; 0 when it is gone. */
export function fileSize(root: string, file: string): number {
  try {
    return statSync(join(root, file)).size
  } catch {
    return 0
  }
}

/**
 * The durations to write after a run: this run's passing files (to a tenth of a second), the old
 * entries of every other file that still exists (a failed or killed file's time says little), in
 * name order so that a change reads as a small diff.
 */
export function nextDurations(
  old: Durations,
  ran: { file: string; ms: number; ok: boolean }[],
  exists: (file: string) => boolean,
): Durations {
  const all = new Map(old)
  for (const o of ran) if (o.ok) all.set(o.file, Math.round(o.ms / 100) / 10)
  return new Map([...all].filter(([file]) => exists(file)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export function writeDurations(path: string, durations: Durations): void {
  writeFileSync(path, `${JSON.stringify(Object.fromEntries(durations), null, 2)}\n`)
}
