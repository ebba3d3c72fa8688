/**
 * @module eval/load
 * A suite is a case file or a folder of them (every `*.yml` / `*.yaml` below it, in name order). Each
 * file is parsed and checked on its own; every problem of every file is reported at once, as
 * `file:line key.path: what is wrong`, before anything runs. A suite folder is not trusted more than a
 * preset: files that are not text, too large, YAML alias bombs, link loops and trees far larger than
 * a suite are problems of that file or folder, never a hang or a crash.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs'
import { basename, dirname, extname, join, relative, resolve } from 'node:path'
import { isMap, LineCounter, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml'
import type { z } from 'zod'
import { CordageError } from '../contracts/errors.ts'
import { MaxAliasCount } from '../host/layers.ts'
import { CaseShape, Expect, type EvalCase } from './case.ts'
import { closest } from '../kit/closest.ts'
import { validateExpect } from './expect.ts'

/** A case is written by hand: far below this. A larger file is refused before it is read. */
export const MaxCaseBytes = 1024 * 1024
/** More case files than this is not a suite written by hand: the wrong folder, or a generated tree. */
export const MaxSuiteFiles = 1000
/** Entries looked at (files of other kinds included) before the walk gives up on a folder that large. */
export const MaxSuiteEntries = 20_000

/** Load every case of a suite. @throws CordageError `invalid_input` listing every problem found */
export function loadSuite(path: string): EvalCase[] {
  const full = resolve(path)
  let top: Stats
  try {
    top = statSync(full)
  } catch (error) {
    throw new CordageError(
      'invalid_input',
      errno(error) === 'ENOENT'
        ? `eval suite ${path} does not exist: give a case file or a folder of them`
        : `eval suite ${path} cannot be opened (${why(error)})`,
      { cause: error },
    )
  }
  const problems: string[] = []
  const files = top.isDirectory() ? caseFiles(full, path, problems) : [full]
  if (!files.length && !problems.length) throw new CordageError('invalid_input', `eval suite ${path} holds no case file (*.yml or *.yaml)`)
  const cases: EvalCase[] = []
  for (const file of files) {
    let loaded: EvalCase | string[]
    try {
      loaded = loadCase(file)
    } catch (error) {
      // A last guard: whatever a file does to the loader, it is that file's problem, listed with the others.
      loaded = [`${shownOf(file)}: cannot be loaded (${why(error)}); fix the file or move it out of the suite`]
    }
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

/**
 * The case files below `root`, in name order. A linked folder is followed once: a folder reached again
 * (a link loop, or two links to the same cases) is a problem, as is a folder that cannot be listed.
 * @throws CordageError `invalid_input` when the tree is far larger than a suite
 */
function caseFiles(root: string, path: string, problems: string[]): string[] {
  const out: string[] = []
  const walked = new Map<string, string>()
  let entries = 0
  const tooLarge = (what: string) =>
    new CordageError(
      'invalid_input',
      `eval suite ${path} ${what}; a suite is a folder of hand-written cases: give the folder you meant, or split it into smaller suites`,
    )
  const walk = (dir: string) => {
    let real: string
    let names: string[]
    try {
      real = realpathSync(dir)
      names = readdirSync(dir).sort()
    } catch (error) {
      problems.push(`${shownOf(dir)}: the folder cannot be read (${why(error)}); make it readable, or move it out of the suite`)
      return
    }
    const before = walked.get(real)
    if (before !== undefined) {
      problems.push(`${shownOf(dir)}: leads to ${before}, a folder already read (a link loop, or the same cases twice); remove the link`)
      return
    }
    walked.set(real, shownOf(dir))
    for (const name of names) {
      if (name.startsWith('.') || name === 'node_modules') continue
      if (++entries > MaxSuiteEntries) throw tooLarge(`has more than ${MaxSuiteEntries} files and folders (stopped in ${shownOf(dir)})`)
      const file = join(dir, name)
      if (isFolder(file)) walk(file)
      else if (['.yml', '.yaml'].includes(extname(name))) {
        out.push(file)
        if (out.length > MaxSuiteFiles) throw tooLarge(`holds more than ${MaxSuiteFiles} case files (*.yml, *.yaml)`)
      }
    }
  }
  walk(root)
  return out
}

/** A folder, or a link to one; a link that leads nowhere is not (as a case file, it is reported by loadCase). */
function isFolder(file: string): boolean {
  try {
    const own = lstatSync(file)
    return own.isDirectory() || (own.isSymbolicLink() && statSync(file).isDirectory())
  } catch {
    return false
  }
}

/** One case, or the problems that keep it from loading. */
export function loadCase(file: string): EvalCase | string[] {
  const shown = shownOf(file)
  const read = readCaseText(file, shown)
  if ('problem' in read) return [read.problem]
  const lines = new LineCounter()
  const doc = parseDocument(read.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true })
  const at = (offset: number | undefined) => `${shown}:${offset === undefined ? 1 : lines.linePos(offset).line}`
  if (doc.errors.length) return doc.errors.map((e) => `${at(e.pos[0])} ${e.message.split('\n')[0]}`)
  const data = toData(doc, at)
  if ('problems' in data) return data.problems
  const raw = data.value
  const place = (path: readonly PropertyKey[]) => at(deepestNode(doc.contents as YamlNode | null, path)?.range?.[0])
  const result = CaseShape.safeParse(raw)
  if (!result.success)
    return result.error.issues.map((found) => {
      const { issue, path } = innermost(found, found.path)
      // A key left out reads "expected one of ..., found nothing" from zod: say it is required.
      const missing = issue.code !== 'unrecognized_keys' && valueAt(raw, path) === undefined
      const message = messageOf(issue, path, valueAt(raw, path))
      return `${place(path)} ${pathText(path)}: ${missing ? `required, and missing (${message})` : message}`
    })
  const expectProblems = validateExpect(result.data.expect).map((p) => `${place(['expect'])} ${p}`)
  const recordProblems = Object.keys(result.data.expect.sideEffects ?? {})
    .concat(Object.keys(result.data.expect.duplicates ?? {}))
    .filter((name) => !Object.hasOwn(result.data.records, name))
    .map((name) => `${place(['expect'])} expect: "${name}" is not a record of this case; name it under records: (a file and a key)`)
  if (expectProblems.length || recordProblems.length) return [...expectProblems, ...recordProblems]
  return { ...result.data, name: result.data.name ?? basename(file).replace(/\.ya?ml$/, ''), file, shown }
}

/** The file's text: a regular file, not too large, readable, UTF-8 without NUL bytes; else what is wrong with it. */
function readCaseText(file: string, shown: string): { text: string } | { problem: string } {
  let stat: Stats
  try {
    stat = statSync(file)
  } catch (error) {
    return { problem: `${shown}: cannot be opened (${why(error)}); a link that leads nowhere? fix it or remove it` }
  }
  if (stat.isDirectory())
    return { problem: `${shown}: is a folder, not a case file; give the case files inside it, or rename it so it does not end in .yml` }
  if (!stat.isFile())
    return { problem: `${shown}: is not a regular file (a device, socket or pipe); a case is a YAML file: remove it from the suite` }
  if (stat.size > MaxCaseBytes)
    return {
      problem: `${shown}: is ${(stat.size / 1024 / 1024).toFixed(1)} MB; a case file is at most ${MaxCaseBytes / 1024 / 1024} MB (is it the file you meant?): move it out of the suite`,
    }
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (error) {
    return { problem: `${shown}: cannot be read (${why(error)}); make it readable for this user, or move it out of the suite` }
  }
  // Checked again on the bytes read: the file may have grown since it was measured.
  if (bytes.length > MaxCaseBytes) return { problem: `${shown}: is larger than ${MaxCaseBytes / 1024 / 1024} MB; move it out of the suite` }
  const nul = bytes.indexOf(0)
  if (nul >= 0)
    return {
      problem: `${shown}: is not a text file (a NUL byte at offset ${nul}); a case is a YAML file (docs/eval.md): move it out of the suite`,
    }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) }
  } catch {
    return {
      problem: `${shown}: is not a text file (not UTF-8); a case is a YAML file (docs/eval.md): save it as UTF-8, or move it out of the suite`,
    }
  }
}

/**
 * The document as plain data. Aliases must name an anchor set before them, must not sit inside the value
 * they name, and may expand at most `MaxAliasCount` times in all (an alias bomb stops there).
 */
function toData(doc: Document, at: (offset: number | undefined) => string): { value: unknown } | { problems: string[] } {
  const problems: string[] = []
  let first: number | undefined
  visit(doc, {
    Alias(_key, node, path) {
      first ??= node.range?.[0]
      const target = node.resolve(doc)
      if (!target)
        problems.push(
          `${at(node.range?.[0])} alias *${node.source} names no anchor: write &${node.source} on a value before it, or write the value out`,
        )
      else if ((path as readonly unknown[]).includes(target))
        problems.push(
          `${at(node.range?.[0])} alias *${node.source} is inside the value it names: a value cannot contain itself; write the value out`,
        )
    },
  })
  if (problems.length) return { problems }
  try {
    return { value: doc.toJS({ maxAliasCount: MaxAliasCount }) }
  } catch (error) {
    const message = why(error)
    if (/excessive alias count/i.test(message))
      return {
        problems: [
          `${at(first)} YAML aliases expand too far (more than ${MaxAliasCount} copies of an anchor's contents, nested aliases counted): write the values out`,
        ],
      }
    return { problems: [`${at(undefined)} cannot be read as data (${message}); fix the file`] }
  }
}

const shownOf = (file: string) => relative(process.cwd(), file) || file
const errno = (error: unknown) => (error as NodeJS.ErrnoException)?.code
function why(error: unknown): string {
  const code = errno(error)
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'ENOENT') return 'no such file'
  if (code === 'ELOOP') return 'a link loop'
  return String((error as Error)?.message ?? error).split('\n')[0]
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

/** The keys a case allows at a path of its top two levels (for "allowed here" in an unknown key's message). */
function allowedKeys(path: readonly PropertyKey[]): string[] | undefined {
  const at = path.join('.')
  if (at === '') return Object.keys(CaseShape.shape)
  if (at === 'expect') return Object.keys(Expect.shape)
  if (at === 'expect.events') return Object.keys(Expect.shape.events.unwrap().shape)
  if (at === 'expect.answer') return Object.keys(Expect.shape.answer.unwrap().shape)
  if (at === 'model') return Object.keys(CaseShape.shape.model.unwrap().shape)
  return undefined
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw
  for (const key of path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined
  return value
}

function messageOf(issue: z.core.$ZodIssue, path: readonly PropertyKey[] = [], found?: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeys(path.slice(0, -1))
    const near = allowed && closest(String(issue.keys[0]), allowed)
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${near ? ` (did you mean ${near}?)` : ''}${allowed ? `; allowed here: ${allowed.join(', ')}` : ''}`
  }
  if (issue.code === 'invalid_value') {
    const values = issue.values.map(String)
    const near = typeof found === 'string' ? closest(found, values) : undefined
    // The error codes are many: name the page that lists them rather than all of them.
    const list =
      values.length > 16 ? 'an error code (docs/reference/errors.md)' : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
    return `expected ${list}${near ? ` (did you mean ${near}?)` : ''}`
  }
  if (issue.code === 'invalid_union') return 'matches none of the allowed forms (see docs/eval.md)'
  return issue.message
}

/** The folder a case's relative paths (its preset, overlay plugin paths) are resolved against. */
export const caseDir = (c: EvalCase) => dirname(c.file)
