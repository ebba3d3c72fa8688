/**
 * @module bench/tool-search/generate
 * Writes the evaluation set: registry.json (the tools, from catalog/) and queries.json (the labelled
 * queries, from queries.ts). Deterministic: the same sources give byte-identical files, so a change
 * to the data shows up as a diff. Checks what the bench relies on before writing: tool names are
 * unique and valid, every expected tool exists, and the set is at least 1,000 tools and 200 queries.
 *
 *   node --import tsx bench/tool-search/generate.ts
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Namespaces } from './catalog/index.ts'
import { expandNamespace, type RegistryTool } from './catalog/expand.ts'
import { QueryGroups } from './queries.ts'
import type { LabeledQuery } from './eval.ts'

const ToolName = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/

export function buildRegistry(): RegistryTool[] {
  const tools = Namespaces.flatMap(expandNamespace)
  const seen = new Set<string>()
  for (const tool of tools) {
    if (!ToolName.test(tool.name)) throw new Error(`invalid tool name ${tool.name}`)
    if (seen.has(tool.name)) throw new Error(`duplicate tool ${tool.name}`)
    seen.add(tool.name)
  }
  return tools
}

export function buildQueries(registry: RegistryTool[]): LabeledQuery[] {
  const names = new Set(registry.map((t) => t.name))
  const queries: LabeledQuery[] = []
  for (const [group, entries] of Object.entries(QueryGroups)) {
    entries.forEach(([query, ...expected], i) => {
      for (const name of expected) if (!names.has(name)) throw new Error(`query "${query}" expects ${name}, which is not in the registry`)
      // Alternate splits over the whole list, so each group lands in both.
      queries.push({ id: `${group}-${i + 1}`, query, expected, split: queries.length % 2 === 0 ? 'dev' : 'test' })
    })
  }
  return queries
}

/** One item per line: small diffs, still plain JSON. */
function jsonLines(items: unknown[]): string {
  return `[\n${items.map((item) => JSON.stringify(item)).join(',\n')}\n]\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const registry = buildRegistry()
  const queries = buildQueries(registry)
  if (registry.length < 1000) throw new Error(`the registry has ${registry.length} tools; the evaluation needs 1,000 or more`)
  if (queries.length < 200) throw new Error(`there are ${queries.length} queries; the evaluation needs 200 or more`)
  const dir = import.meta.dirname
  writeFileSync(join(dir, 'registry.json'), jsonLines(registry))
  writeFileSync(join(dir, 'queries.json'), jsonLines(queries))
  const spaces = new Set(registry.map((t) => t.name.split('__')[0])).size
  console.log(`wrote ${registry.length} tools in ${spaces} namespaces and ${queries.length} queries to ${dir}`)
}
