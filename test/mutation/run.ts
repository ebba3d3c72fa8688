/**
 * `npm run test:mutation [-- FILE...] [--force] [--head] [--log info]`: mutation testing of the trust boundary.
 *
 * For each target of test/mutation/targets.ts (or those named: `core/kernel/ticket.ts`, or a part such as
 * `plugins/store-memory/memory-store.ts#ledger`), StrykerJS mutates that file only and runs, for each
 * mutant, only the tests that exercise it, through the `command` test runner (node:test has no Stryker
 * runner). Results are kept per target in reports/mutation/<target>.incremental.json, so a second run
 * tests only the mutants whose code changed.
 *
 * The command runner reports no per-test coverage, so Stryker's incremental mode cannot see that a
 * test was added. This script keeps a digest of each target's test files beside its incremental file:
 * when the tests changed, the mutants that were not killed are tested again (killed ones are kept).
 * `--force` tests every mutant again.
 *
 * Equivalent mutants (test/mutation/equivalent.md) are survivors no test can kill: they are listed
 * apart and left out of the score, never counted as killed.
 *
 * `--head` scores the last commit rather than the work tree: a clean copy of HEAD is made under
 * .stryker-tmp/ and mutated there (results still go to reports/mutation/).
 *
 * Exit code: 0 when every target scored at least the threshold (90%, or `--threshold N`), else 1.
 */
import { createHash } from 'node:crypto'
import { execSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { Stryker } from '@stryker-mutator/core'
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core'
import { Targets, type Target } from './targets.ts'

const ReportDir = resolve('reports/mutation')

interface Row {
  target: string
  mutants: number
  killed: number
  survived: number
  timeout: number
  noCoverage: number
  errors: number
  equivalent: number
  score: number
  seconds: number
  /** Why the target could not be scored (its tests fail without any mutant, for example). */
  failed?: string
}

interface Equivalent {
  file: string
  /** The code the mutant replaces, white space collapsed: a place that survives edits elsewhere in the file. */
  original: string
  mutator: string
  replacement: string
  reason: string
}

function parseArgs(argv: string[]) {
  const names: string[] = []
  let force = false
  let head = false
  let logLevel = 'warn' as PartialStrykerOptions['logLevel']
  let threshold = 90
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--force') force = true
    else if (arg === '--head') head = true
    else if (arg === '--log') logLevel = argv[++i] as PartialStrykerOptions['logLevel']
    else if (arg === '--threshold') threshold = Number(argv[++i])
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}; options: --force, --head, --log LEVEL, --threshold N`)
    else names.push(arg)
  }
  return { names, force, head, logLevel, threshold }
}

function pick(names: string[]): Target[] {
  if (!names.length) return Targets
  return names.map((name) => {
    const exact = Targets.find((t) => t.name === name)
    if (exact) return exact
    const parts = Targets.filter((t) => t.name.split('#')[0] === name)
    if (parts.length === 1) return parts[0]
    throw new Error(`no target ${name}; targets: ${Targets.map((t) => t.name).join(', ')}`)
  })
}

/** The equivalent mutants listed in equivalent.md: `| file | original | mutator | replacement | reason |`. */
function readEquivalents(): Equivalent[] {
  const text = readFileSync(new URL('./equivalent.md', import.meta.url), 'utf8')
  const out: Equivalent[] = []
  for (const line of text.split('\n')) {
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim())
    if (cells.length !== 5 || !cells[0].startsWith('`')) continue
    const unquote = (s: string) => s.replace(/^``? ?|`? ?`$/g, '').replaceAll('\\|', '|')
    out.push({
      file: unquote(cells[0]),
      original: oneLine(unquote(cells[1])),
      mutator: cells[2],
      replacement: oneLine(unquote(cells[3])),
      reason: cells[4],
    })
  }
  return out
}

/** The code a mutant replaces (report positions are 1-based). */
function originalOf(source: string[], m: MutantResult): string {
  const { start, end } = m.location
  if (start.line === end.line) return source[start.line - 1].slice(start.column - 1, end.column - 1)
  return [
    source[start.line - 1].slice(start.column - 1),
    ...source.slice(start.line, end.line - 1),
    source[end.line - 1].slice(0, end.column - 1),
  ].join('\n')
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim()
}

function digestOf(files: string[]): string {
  const h = createHash('sha256')
  for (const file of files) h.update(file).update('\0').update(readFileSync(file)).update('\0')
  return h.digest('hex')
}

/** Keep killed results only, so the others are tested again against the changed tests. */
function dropUnkilled(incrementalFile: string): void {
  if (!existsSync(incrementalFile)) return
  const report = JSON.parse(readFileSync(incrementalFile, 'utf8')) as { files: Record<string, { mutants: { status: string }[] }> }
  for (const file of Object.values(report.files)) file.mutants = file.mutants.filter((m) => m.status === 'Killed')
  writeFileSync(incrementalFile, JSON.stringify(report))
}

async function runTarget(
  target: Target,
  options: { force: boolean; logLevel: PartialStrykerOptions['logLevel'] },
  equivalents: Equivalent[],
): Promise<Row> {
  const started = Date.now()
  const slug = target.name.replace(/[^A-Za-z0-9.-]+/g, '_')
  const incrementalFile = `${ReportDir}/${slug}.incremental.json`
  const digestFile = `${ReportDir}/${slug}.tests.sha256`
  const tests = target.tests.filter((t) => existsSync(t))
  if (!tests.length) throw new Error(`${target.name}: none of its test files exist (${target.tests.join(', ')})`)
  const digest = digestOf(tests)
  // The mutated files as Stryker copies them now (others may edit them while it runs).
  const sources = new Map<string, string[]>()
  for (const entry of target.mutate()) {
    const file = entry.replace(/:\d+(:\d+)?-\d+(:\d+)?$/, '')
    sources.set(file, readFileSync(file, 'utf8').split('\n'))
  }
  const previous = existsSync(digestFile) ? readFileSync(digestFile, 'utf8').trim() : undefined
  if (previous !== undefined && previous !== digest) dropUnkilled(incrementalFile)

  // One file runs in this process (node:test sets the exit code); several run each in its own, as npm test does.
  const command =
    tests.length === 1
      ? `node --import tsx ${tests[0]}`
      : `node --import tsx --test --test-reporter=dot --test-timeout=60000 ${tests.join(' ')}`
  console.log(`\n▶ ${target.name}: ${command}`)
  const stryker = new Stryker({
    configFile: 'stryker.config.json',
    mutate: target.mutate(),
    commandRunner: { command },
    incremental: true,
    incrementalFile,
    force: options.force,
    jsonReporter: { fileName: `${ReportDir}/${slug}.json` },
    logLevel: options.logLevel,
  })
  const results: MutantResult[] = await stryker.runMutationTest()
  writeFileSync(digestFile, digest + '\n')

  const row: Row = {
    target: target.name,
    mutants: 0,
    killed: 0,
    survived: 0,
    timeout: 0,
    noCoverage: 0,
    errors: 0,
    equivalent: 0,
    score: 0,
    seconds: 0,
  }
  const unexplained: MutantResult[] = []
  for (const m of results) {
    const file = relative(process.cwd(), m.fileName)
    const original = oneLine(originalOf(sources.get(file) ?? [], m))
    if (m.status === 'Ignored' || m.status === 'Pending') continue
    row.mutants++
    if (m.status === 'Killed') row.killed++
    else if (m.status === 'Timeout') row.timeout++
    else if (m.status === 'NoCoverage') row.noCoverage++
    else if (m.status === 'CompileError' || m.status === 'RuntimeError') row.errors++
    else if (m.status === 'Survived') {
      const eq = equivalents.find(
        (e) => e.file === file && e.original === original && e.mutator === m.mutatorName && e.replacement === oneLine(m.replacement),
      )
      if (eq) row.equivalent++
      else {
        row.survived++
        unexplained.push({ ...m, statusReason: original })
      }
    }
  }
  // Detected (killed, timed out, or crashing the code under test) over everything that is not equivalent.
  const detected = row.killed + row.timeout + row.errors
  const valid = row.mutants - row.equivalent
  row.score = valid ? (100 * detected) / valid : 100
  row.seconds = (Date.now() - started) / 1000
  for (const m of unexplained) {
    console.log(
      `  survived: ${relative(process.cwd(), m.fileName)}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: \`${m.statusReason!.slice(0, 100)}\` → \`${oneLine(m.replacement).slice(0, 100)}\``,
    )
  }
  return row
}

function printTable(rows: Row[], threshold: number): void {
  const header = ['file', 'mutants', 'killed', 'survived', 'timeout', 'no cov', 'errors', 'equiv', 'score', 'time']
  const total = rows.reduce(
    (t, r) => ({
      ...t,
      mutants: t.mutants + r.mutants,
      killed: t.killed + r.killed,
      survived: t.survived + r.survived,
      timeout: t.timeout + r.timeout,
      noCoverage: t.noCoverage + r.noCoverage,
      errors: t.errors + r.errors,
      equivalent: t.equivalent + r.equivalent,
      seconds: t.seconds + r.seconds,
    }),
    {
      target: 'total',
      mutants: 0,
      killed: 0,
      survived: 0,
      timeout: 0,
      noCoverage: 0,
      errors: 0,
      equivalent: 0,
      score: 0,
      seconds: 0,
    } as Row,
  )
  total.score =
    total.mutants - total.equivalent ? (100 * (total.killed + total.timeout + total.errors)) / (total.mutants - total.equivalent) : 100
  const cells = (r: Row) =>
    [
      r.target,
      r.mutants,
      r.killed,
      r.survived,
      r.timeout,
      r.noCoverage,
      r.errors,
      r.equivalent,
      r.failed ? 'failed' : `${r.score.toFixed(1)}%${r.score < threshold && r !== total ? ' ✗' : ''}`,
      `${Math.round(r.seconds)}s`,
    ].map(String)
  const lines = [header, ...rows.map(cells), cells(total)]
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i].length)))
  const fmt = (l: string[]) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  console.log('\n' + fmt(header))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const l of lines.slice(1, -1)) console.log(fmt(l))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  console.log(fmt(lines[lines.length - 1]))
  console.log(
    `\nscore = (killed + timeout + errors) / (mutants - equivalent); equivalent mutants: test/mutation/equivalent.md; threshold ${threshold}%`,
  )
}

const args = parseArgs(process.argv.slice(2))
const targets = pick(args.names)
mkdirSync(ReportDir, { recursive: true })
const equivalents = readEquivalents()
let headCopy: string | undefined
if (args.head) {
  mkdirSync('.stryker-tmp', { recursive: true })
  headCopy = mkdtempSync(resolve('.stryker-tmp', 'head-'))
  execSync(`git archive HEAD | tar -x -C ${JSON.stringify(headCopy)}`)
  symlinkSync(resolve('node_modules'), join(headCopy, 'node_modules'))
  console.log(`scoring HEAD (${execSync('git rev-parse --short HEAD').toString().trim()}) in ${relative('.', headCopy)}`)
  process.chdir(headCopy)
}
const rows: Row[] = []
for (const target of targets) {
  const started = Date.now()
  try {
    rows.push(await runTarget(target, args, equivalents))
  } catch (error) {
    // Most often: the target's tests fail on the code as it is, before any mutant (Stryker's dry run).
    const failed = (error as Error).message.split('\n')[0]
    console.error(`✗ ${target.name}: ${failed}`)
    rows.push({
      target: target.name,
      mutants: 0,
      killed: 0,
      survived: 0,
      timeout: 0,
      noCoverage: 0,
      errors: 0,
      equivalent: 0,
      score: 0,
      seconds: (Date.now() - started) / 1000,
      failed,
    })
  }
}
printTable(rows, args.threshold)
if (headCopy) rmSync(headCopy, { recursive: true, force: true })
for (const r of rows.filter((r) => r.failed)) console.log(`${r.target}: not scored: ${r.failed}`)
process.exitCode = rows.every((r) => !r.failed && r.score >= args.threshold) ? 0 : 1
