/**
 * The read-only tools: read_file, list_files and search. They change nothing (`sideEffect: none`), so
 * policy can let them run without asking. Every path goes through resolveInside. Each holds a constrained
 * allow's `pathPrefix` (policy may let the model read only a part of the workspace): the file or folder
 * must lie in the prefix folder, by path segments, after every symbolic link.
 */
import { stat } from 'node:fs/promises'
import { z } from 'zod'
import { reads } from './footprint.ts'
import { CordageError, defineTool, type Tool } from 'cordage'
import { readFileWithin } from 'cordage/kit'
import type { Config } from './manifest.ts'
import { walkFiles } from './walk.ts'
import { realRoot, resolveInside } from './workspace-path.ts'

/** The run's workspace directory. */
export type DirOf = (runId: string) => Promise<string>

export function readFileTool(dirOf: DirOf, config: Config): Tool {
  return defineTool({
    name: 'read_file',
    description: 'Read a text file of the workspace. The first line names the file as [file: <path>]; cite it that way.',
    input: z
      .object({
        path: z.string().min(1).describe('Relative to the workspace root, e.g. src/index.js'),
        startLine: z.number().int().min(1).optional().describe('First line to return (1-based).'),
        endLine: z.number().int().min(1).optional().describe('Last line to return.'),
      })
      .strict(),
    sideEffect: 'none',
    timeoutMs: 10_000,
    footprint: ({ path }) => reads(path),
    enforces: ['pathPrefix'],
    run: async ({ path, startLine, endLine }, io) => {
      const file = await resolveInside(await dirOf(io.runId), path, io.constraints?.pathPrefix)
      if (!file.exists || !(await stat(file.real)).isFile())
        throw new CordageError('tool_failed', `${file.shown} is not a file; list_files shows what there is`)
      const text = await readFileWithin(file)
      if (text === undefined) throw new CordageError('tool_failed', `${file.shown} is gone; list_files shows what there is`)
      const lines = text.split('\n')
      // A final newline ends the last line; it does not start another one.
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
      const from = startLine ?? 1
      const to = Math.min(endLine ?? lines.length, lines.length)
      let shown = lines.slice(from - 1, to).join('\n')
      const cut = shown.length > config.maxReadChars
      if (cut) shown = shown.slice(0, config.maxReadChars)
      const range = from === 1 && to === lines.length ? `${lines.length} lines` : `lines ${from}-${to} of ${lines.length}`
      const note = cut ? `\n… cut at ${config.maxReadChars} characters; read a line range with startLine and endLine` : ''
      return {
        output: { path: file.shown, lines: lines.length, from, to, cut },
        observation: `[file: ${file.shown}] ${range}\n${shown}${note}`,
      }
    },
  })
}

export function listFilesTool(dirOf: DirOf, config: Config): Tool {
  return defineTool({
    name: 'list_files',
    description: 'List the files of the workspace (or of one folder in it), recursively.',
    input: z.object({ path: z.string().min(1).default('.').describe('Folder relative to the workspace root; . for all') }).strict(),
    sideEffect: 'none',
    timeoutMs: 10_000,
    footprint: ({ path }) => reads(path),
    enforces: ['pathPrefix'],
    run: async ({ path }, io) => {
      const root = await realRoot(dirOf(io.runId))
      const folder = await resolveInside(root, path, io.constraints?.pathPrefix)
      if (!folder.exists || !(await stat(folder.real)).isDirectory())
        throw new CordageError('tool_failed', `${folder.shown} is not a folder of the workspace`)
      const { files, truncated } = await walkFiles(root, folder.real, config.ignore, config.maxListEntries)
      const note = truncated ? `\n… more files; list a subfolder to see them (at most ${config.maxListEntries} are shown)` : ''
      return { output: { files, truncated }, observation: `${files.length} file(s) under ${folder.shown}:\n${files.join('\n')}${note}` }
    },
  })
}
