/**
 * @module tool-search/search-tool
 * `search_tools`, the one tool the model always sees. It lists matching tools compactly (name,
 * namespace, one line of description, score) and reveals them: it adds their names to its plugin's
 * slice of run state (`ToolResult.state`, recorded in `slice/update`), and the tools service shows
 * them, with their full schemas, from the next step on. With `names` it loads tools the model already
 * knows by name.
 */
import { z } from 'zod'
import { defineTool, sliceOf, type RunState, type Tool, type ToolResult } from 'cordage'

export const SearchToolName = 'search_tools'

/** A tool as a search lists it: short, no schema. */
export interface Listing {
  name: string
  namespace: string
  summary: string
  score?: number
}

/** What the search tool asks of the tools service, for the run it is called in. */
export interface Searcher {
  search(runId: string, query: string, limit: number, signal?: AbortSignal): Listing[] | Promise<Listing[]>
  load(runId: string, names: string[]): { found: Listing[]; missing: { name: string; suggestions: string[] }[] }
  namespaces(runId: string): string[]
}

export interface SearchArgs {
  query?: string
  names?: string[]
  limit?: number
}

export function searchTool(searcher: Searcher, limits: { limit: number; maxLimit: number }): Tool {
  return defineTool({
    name: SearchToolName,
    description:
      'Find tools to call. Most tools are not loaded yet: describe what you want to do in a few words ' +
      '(for example "create a GitHub issue" or "refund a payment") and the best matches become callable from your next step. ' +
      'Tool names look like <namespace>__<tool>. Pass `names` to load tools whose names you already know.',
    input: z
      .object({
        query: z.string().min(1).max(500).optional().describe('What you want to do, in a few words.'),
        names: z.array(z.string().min(1).max(64)).min(1).max(20).optional().describe('Exact names of tools to load.'),
        limit: z.number().int().min(1).max(limits.maxLimit).optional().describe(`How many tools to list (default ${limits.limit}).`),
      })
      .strict()
      .refine((a) => a.query !== undefined || a.names !== undefined, 'give a query, or names of tools to load'),
    sideEffect: 'none',
    timeoutMs: 5000,
    tags: ['meta'],
    run: (args, io) => runSearch(searcher, io.runId, args, limits.limit, io.signal),
  })
}

/** What one call of search_tools returns; a plain function so the bench can measure what the model reads. */
export async function runSearch(
  searcher: Searcher,
  runId: string,
  { query, names, limit }: SearchArgs,
  defaultLimit: number,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const found: Listing[] = []
  const notes: string[] = []
  if (names) {
    const loaded = searcher.load(runId, names)
    found.push(...loaded.found)
    for (const m of loaded.missing) {
      notes.push(`No tool "${m.name}" is available${m.suggestions.length ? ` (did you mean ${m.suggestions.join(', ')}?)` : ''}.`)
    }
  }
  if (query !== undefined) {
    for (const hit of await searcher.search(runId, query, limit ?? defaultLimit, signal)) {
      if (!found.some((f) => f.name === hit.name)) found.push(hit)
    }
  }
  let head: string[]
  if (found.length === 0) {
    const spaces = searcher.namespaces(runId)
    head = [
      `No tool matches${query !== undefined ? ` "${query}"` : ''}. Try other words${spaces.length ? `, or a namespace: ${spaces.join(', ')}` : ''}.`,
    ]
  } else {
    head = [`${found.length} tool(s) you can call from your next step:`, ...found.map(line)]
  }
  return {
    output: { query, names, results: found },
    observation: [...head, ...notes].join('\n'),
    // `add`: a tool found again is not listed twice in the slice.
    state: found.length ? { add: { revealed: found.map((f) => f.name) } } : undefined,
  }
}

/** The tools revealed so far in a run, in order of first reveal: the plugin's slice (`revealed`, a list of names). */
export function revealedIn(state: Readonly<RunState>, slice: string): string[] {
  const listed = sliceOf(state, slice).revealed
  if (!Array.isArray(listed)) return []
  return [...new Set(listed.filter((name): name is string => typeof name === 'string' && name.length > 0))]
}

function line(l: Listing): string {
  const where = [l.namespace, l.score !== undefined ? l.score.toFixed(1) : ''].filter(Boolean).join(', ')
  return `- ${l.name}${where ? ` (${where})` : ''}: ${l.summary}`
}

/** The first sentence of a description, at most 120 characters: enough to choose, not to call. */
export function summaryOf(description: string): string {
  const first = description.split(/(?<=[.!?])\s/)[0].trim()
  return first.length <= 120 ? first : `${first.slice(0, 117).trimEnd()}...`
}
