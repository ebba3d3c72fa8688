/**
 * Converts MetaTool's labelled queries (the GitHub repository HowieHwong/MetaTool, MIT licence) into the evaluation format of
 * bench/tool-search: tools with descriptions, and queries each labelled with the tool that answers it.
 *
 *   node --import tsx bench/tool-search/public/convert-metatool.ts --from PATH
 *
 * PATH is a clone of the repository (a work tree, or a bare git directory: files are read with `git
 * show HEAD:…`). Writes metatool.json beside this file. Deterministic: the same input gives the same
 * bytes, so a re-conversion shows in a diff.
 *
 * What is kept, and why: MetaTool has 20,614 single-tool queries over 199 tools (dataset/data/
 * all_clean_data.csv) and the tools' descriptions (dataset/plugin_des.json). Committing all of it would
 * be 2.7 MB; a sample of 10 queries per tool, picked by a hash of the query text (not by reading them),
 * keeps every tool represented with about 2,000 queries. Each query goes to `dev` or `test` by the
 * same hash; the ranking may only ever be tuned on `dev`.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const PerTool = 10

function main() {
  const from = option('--from')
  if (!from) fail('usage: convert-metatool.ts --from PATH (a clone of the MetaTool repository)')
  const read = reader(from)
  const descriptions = JSON.parse(read('dataset/plugin_des.json')) as Record<string, string>
  const rows = parseCsv(read('dataset/data/all_clean_data.csv'))
  const header = rows.shift()
  if (header?.join(',') !== 'Query,Tool') fail(`unexpected CSV header ${JSON.stringify(header)}: expected Query,Tool`)

  const byTool = new Map<string, string[]>()
  for (const [query, tool] of rows) {
    if (!query?.trim() || !tool) continue
    if (!(tool in descriptions)) fail(`query labelled with ${tool}, which plugin_des.json does not describe`)
    const list = byTool.get(tool) ?? []
    if (!list.includes(query.trim())) list.push(query.trim())
    byTool.set(tool, list)
  }
  // Tool names must be identifiers (defineTool refuses `PDF&URLTool`): other characters become `_`.
  const nameOf = new Map(Object.keys(descriptions).map((original) => [original, original.replace(/[^a-zA-Z0-9_-]/g, '_')]))
  if (new Set(nameOf.values()).size !== nameOf.size) fail('two tool names are the same once made identifiers')
  const tools = Object.keys(descriptions)
    .sort()
    .map((original) => ({
      name: nameOf.get(original)!,
      description: descriptions[original].trim(),
      ...(nameOf.get(original) !== original ? { original } : {}),
    }))
  const queries: { id: string; query: string; expected: string[]; split: 'dev' | 'test' }[] = []
  for (const tool of [...byTool.keys()].sort()) {
    const picked = byTool
      .get(tool)!
      .map((query) => ({ query, h: hash(query) }))
      .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0))
      .slice(0, PerTool)
    for (const { query, h } of picked) {
      queries.push({
        id: `metatool-${h.slice(0, 10)}`,
        query,
        expected: [tool],
        split: Number.parseInt(h.slice(-1), 16) % 2 === 0 ? 'dev' : 'test',
      })
    }
  }
  const out = {
    source: 'the GitHub repository HowieHwong/MetaTool: dataset/plugin_des.json, dataset/data/all_clean_data.csv',
    commit: commitOf(from),
    licence: 'MIT, Copyright (c) 2023 Yue Huang; the full text is in LICENSE-metatool beside this file',
    sample: `${PerTool} queries per tool, chosen by sha256 of the query text; split by the same hash`,
    tools,
    queries,
  }
  const file = join(import.meta.dirname, 'metatool.json')
  writeFileSync(file, compact(out))
  const dev = queries.filter((q) => q.split === 'dev').length
  console.log(
    `${file}: ${tools.length} tools, ${queries.length} queries (${dev} dev, ${queries.length - dev} test) from ${rows.length} rows`,
  )
}

/** Reads a file of the clone: from its work tree when there is one, else from its HEAD commit. */
function reader(from: string): (path: string) => string {
  return (path) =>
    existsSync(join(from, path))
      ? readFileSync(join(from, path), 'utf8')
      : execFileSync('git', ['-C', from, 'show', `HEAD:${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 })
}

function commitOf(from: string): string {
  try {
    return execFileSync('git', ['-C', from, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return 'unknown (not a git checkout)'
  }
}

/** RFC 4180 CSV: quoted fields may hold commas, newlines and doubled quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      row.push(field)
      rows.push(row)
      row = []
      field = ''
    } else field += c
  }
  if (field || row.length) rows.push([...row, field])
  return rows.filter((r) => r.length > 1 || r[0] !== '')
}

/** One tool or query per line: readable in a diff, half the size of indented JSON. */
function compact(value: Record<string, unknown>): string {
  const entries = Object.entries(value).map(([key, v]) =>
    Array.isArray(v)
      ? `${JSON.stringify(key)}: [\n${v.map((item) => `  ${JSON.stringify(item)}`).join(',\n')}\n ]`
      : `${JSON.stringify(key)}: ${JSON.stringify(v)}`,
  )
  return `{\n ${entries.join(',\n ')}\n}\n`
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1] : undefined
}

function fail(message: string): never {
  console.error(message)
  process.exit(1)
}

if (process.argv[1]?.endsWith('convert-metatool.ts')) main()
