/**
 * @module eval/load
 * A suite is a case file or a folder of them (every `*.yml` / `*.yaml` below it, in name order). Each
 * file is parsed and checked on its own; every problem of every file is reported at once, as
 * `file:line key.path: what is wrong`, before anything runs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, extname, join, relative, resolve } from 'node:path'
import { isMap, LineCounter, parseDocument, type Node as YamlNode } from 'yaml'
import type { z } from 'zod'
import { CordageError } from '../contracts/errors.ts'
import { CaseShape, type EvalCase } from './case.ts'
import { validateExpect } from './expect.ts'

/** Load every case of a suite. @throws CordageError `invalid_input` listing every problem found */
export function loadSuite(path: string): EvalCase[] {
  const full = resolve(path)
  if (!existsSync(full)) throw new CordageError('invalid_input', `eval suite ${path} does not exist: give a case file or a folder of them`)
  const files = statSync(full).isDirectory() ? caseFiles(full) : [full]
  if (!files.length) throw new CordageError('invalid_input', `eval suite ${path} holds no case file (*.yml or *.yaml)`)
  const cases: EvalCase[] = []
  const problems: string[] = []
  for (const file of files) {
    const loaded = loadCase(file)
    if (Array.isArray(loaded)) problems.push(...loaded)
    else cases.push(loaded)
  }
  const seen = new Map<string, string>()
  for (const c of cases) {
    const other = seen.get(c.name)
    if (other)
      problems.push(`${c.shown}: case name "${c.name}" is also the name of ${other}; names identify cases in reports and baselines`)
    seen.set(c.name, c.shown)
  }
  if (problems.length)
    throw new CordageError('invalid_input', `eval suite ${path} has ${problems.length} problem(s):\n  ${problems.join('\n  ')}`, {
      data: problems,
    })
  return cases
}

function caseFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'node_modules') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...caseFiles(path))
    else if (['.yml', '.yaml'].includes(extname(name))) out.push(path)
  }
  return out
}

/** One case, or the problems that keep it from loading. */
export function loadCase(file: string): EvalCase | string[] {
  const shown = relative(process.cwd(), file) || file
  const lines = new LineCounter()
  const doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines, prettyErrors: false })
  if (doc.errors.length) return doc.errors.map((e) => `${shown}:${lines.linePos(e.pos[0]).line} ${e.message.split('\n')[0]}`)
  const raw = doc.toJS()
  const place = (path: readonly PropertyKey[]) => {
    const node = deepestNode(doc.contents as YamlNode | null, path)
    const line = node?.range ? lines.linePos(node.range[0]).line : 1
    return `${shown}:${line}`
  }
  const result = CaseShape.safeParse(raw)
  if (!result.success)
    return result.error.issues.map((found) => {
      const { issue, path } = innermost(found, found.path)
      return `${place(path)} ${pathText(path)}: ${messageOf(issue)}`
    })
  const expectProblems = validateExpect(result.data.expect).map((p) => `${place(['expect'])} expect: ${p}`)
  const recordProblems = Object.keys(result.data.expect.sideEffects ?? {})
    .concat(Object.keys(result.data.expect.duplicates ?? {}))
    .filter((name) => !Object.hasOwn(result.data.records, name))
    .map((name) => `${place(['expect'])} expect: "${name}" is not a record of this case; name it under records: (a file and a key)`)
  if (expectProblems.length || recordProblems.length) return [...expectProblems, ...recordProblems]
  return { ...result.data, name: result.data.name ?? basename(file).replace(/\.ya?ml$/, ''), file, shown }
}

function deepestNode(root: YamlNode | null, path: readonly PropertyKey[]): YamlNode | null {
  let node = root
  for (const key of path) {
    if (!node || !('items' in node)) break
    const items = (node as { items: unknown[] }).items
    const next = isMap(node)
      ? (items as { key: { value?: unknown }; value: YamlNode }[]).find((p) => p.key?.value === key)?.value
      : (items[key as number] as YamlNode | undefined)
    if (!next) break
    node = next
  }
  return node
}

function pathText(path: readonly PropertyKey[]): string {
  return path.length ? path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('') : '(top)'
}

/**
 * The issue to report and where: an unknown key at its own line; for a value that fits none of a
 * union's forms (a fault), the problem of the form it came closest to, since "matches none" does not
 * say what to fix.
 */
function innermost(issue: z.core.$ZodIssue, path: PropertyKey[]): { issue: z.core.$ZodIssue; path: PropertyKey[] } {
  if (issue.code === 'unrecognized_keys') return { issue, path: [...path, issue.keys[0]] }
  if (issue.code === 'invalid_union' && issue.errors.length) {
    const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]
    if (closest.length) return innermost(closest[0], [...path, ...closest[0].path])
  }
  return { issue, path }
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
  if (issue.code === 'invalid_value') return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
  if (issue.code === 'invalid_union') return 'matches none of the allowed forms (see docs/eval.md)'
  return issue.message
}

/** The folder a case's relative paths (its preset, overlay plugin paths) are resolved against. */
export const caseDir = (c: EvalCase) => dirname(c.file)
