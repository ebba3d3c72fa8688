/**
 * search: lines of the workspace's text files that contain a string or match a regular expression.
 * Bounded three ways, so one call cannot take the run's time or context: matches returned, file size
 * (larger files and binary files are skipped) and the length of each line shown.
 */
import { constants } from 'node:fs'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { reads } from './footprint.ts'
import { CordageError, defineTool, safeRegex, type SafeRegex, type Tool } from 'cordage'
import type { Config } from './manifest.ts'
import type { DirOf } from './read-files.ts'
import { walkFiles } from './walk.ts'
import { realRoot, resolveInside } from './workspace-path.ts'

/** Files a search looks at, at most. */
const MaxFiles = 5000
/** Characters of a matching line shown. */
const LineChars = 300

export interface Match {
  path: string
  line: number
  text: string
}

/** A line longer than this is not searched (a minified file has megabyte lines). */
const MatchChars = 100_000
/** How long the search runs before it lets the event loop (timers, cancellation) in. */
const YieldEveryMs = 20

export function searchTool(dirOf: DirOf, config: Config): Tool {
  return defineTool({
    name: 'search',
    description: "Find lines in the workspace's text files that contain a string (or match a regular expression). Answers path:line: text.",
    input: z
      .object({
        query: z.string().min(1),
        regex: z
          .boolean()
          .default(false)
          .describe('Treat query as a regular expression, in RE2 syntax: no lookahead, lookbehind or backreferences.'),
        caseSensitive: z.boolean().default(true),
        path: z.string().min(1).default('.').describe('Folder to search, relative to the workspace root.'),
      })
      .strict(),
    sideEffect: 'none',
    timeoutMs: 15_000,
    footprint: ({ path }) => reads(path),
    // Under a constrained allow's pathPrefix the folder searched must lie in it (the walk follows no link).
    enforces: ['pathPrefix'],
    run: async ({ query, regex, caseSensitive, path }, io) => {
      const test = matcher(query, regex, caseSensitive)
      const root = await realRoot(dirOf(io.runId))
      const folder = await resolveInside(root, path, io.constraints?.pathPrefix)
      if (!folder.exists || !(await stat(folder.real)).isDirectory())
        throw new CordageError('tool_failed', `${folder.shown} is not a folder of the workspace`)
      const { files } = await walkFiles(root, folder.real, config.ignore, MaxFiles)
      const matches: Match[] = []
      let truncated = false
      let lastYield = performance.now()
      let skipped = 0
      for (const file of files) {
        io.signal.throwIfAborted()
        const text = await readText(join(root, file), config.maxSearchFileBytes)
        if (text === undefined) continue
        const lines = text.split('\n')
        for (let i = 0; i < lines.length; i++) {
          // Linear time is not short time: a pattern the model made large costs per character. Lines
          // longer than MatchChars are not searched (said in the answer), and the search yields every
          // so often, so the tool's time limit and cancellation can stop it.
          if (performance.now() - lastYield > YieldEveryMs) {
            await new Promise((resolve) => setImmediate(resolve))
            io.signal.throwIfAborted()
            lastYield = performance.now()
          }
          if (lines[i].length > MatchChars) {
            skipped++
            continue
          }
          if (!test(lines[i])) continue
          if (matches.length >= config.maxSearchMatches) {
            truncated = true
            break
          }
          matches.push({ path: file, line: i + 1, text: lines[i].trim().slice(0, LineChars) })
        }
        if (truncated) break
      }
      const shown = matches.map((m) => `${m.path}:${m.line}: ${m.text}`).join('\n')
      const note =
        (truncated ? `\n… more matches; narrow the query or the folder (at most ${config.maxSearchMatches} are shown)` : '') +
        (skipped ? `\n(${skipped} line(s) longer than ${MatchChars} characters were not searched)` : '')
      return {
        output: { matches, truncated },
        observation: matches.length
          ? `${matches.length} match(es):\n${shown}${note}`
          : `no line under ${folder.shown} matches ${JSON.stringify(query)}`,
      }
    },
  })
}

function matcher(query: string, regex: boolean, caseSensitive: boolean): (line: string) => boolean {
  if (!regex) {
    const needle = caseSensitive ? query : query.toLowerCase()
    return (line) => (caseSensitive ? line : line.toLowerCase()).includes(needle)
  }
  // The model writes the query and the workspace holds the text: on a backtracking engine one query
  // such as (a+)+$ could stall the whole process on one long line. The linear-time engine cannot stall.
  let re: SafeRegex
  try {
    re = safeRegex(query, caseSensitive ? '' : 'i')
  } catch (error) {
    throw new CordageError('tool_failed', `query ${(error as Error).message}`)
  }
  return (line) => re.test(line)
}

/** The file as text, or undefined when it is too large or looks binary (a NUL byte near the start). */
async function readText(path: string, maxBytes: number): Promise<string | undefined> {
  // The walk listed regular files only; one replaced by a symbolic link since is skipped, not followed.
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined
    throw error
  }
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > maxBytes) return undefined
    const buffer = await handle.readFile()
    if (buffer.subarray(0, 8000).includes(0)) return undefined
    return buffer.toString('utf8')
  } finally {
    await handle.close()
  }
}
