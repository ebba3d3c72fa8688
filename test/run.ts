/**
 * The suite's runner (`npm test`): every test file in its own process, several at a time, then the ten
 * slowest files; a file fails when it leaves anything in the temp dir.
 *
 * Why not `node --test` alone: on a 2-core machine it runs one file at a time (its default is one fewer
 * than the cores), while most files wait on child processes, servers and timers, not on the CPU; it
 * says nothing of which files are slow; and a file that leaves a folder behind goes unnoticed. Each file
 * runs here with TMPDIR pointing at a folder of its own, which must be empty when it ends.
 *
 * Files that must not overlap (they share something a parallel file would disturb) are listed in
 * {@link Alone} with the reason; they run after the others, one at a time.
 *
 * The `cordage` commands the tests start run the checkout compiled as it ships (test/bin.ts): built
 * once here into .test-dist/, they start in a third of the CPU time of the sources through tsx.
 *
 * Files start longest first, as test/durations.json remembers them (file → seconds of a past run), so
 * the suite does not end waiting on one long file that started last (test/durations.ts); a file it
 * does not know is guessed from its size. `--record-durations` rewrites it from the run (the files
 * that passed; other entries are kept). Without a usable file, files run in name order, as it says.
 *
 * Usage: node --import tsx test/run.ts [--jobs N] [--verbose] [--sources] [--record-durations] [--with CMD]... [FILE...]
 *   FILE   test files to run (default: the whole suite, as {@link Suite} lists it)
 *   --jobs how many files at once (default $CORDAGE_TEST_JOBS, else cores + 2)
 *   --verbose  print every file's output, not only the failing ones'
 *   --sources  run the commands from the TypeScript sources (core/cli/bin.js), not compiled
 *   --record-durations  write each passing file's time to test/durations.json
 *   --with CMD  also run the shell command CMD, started first, beside the files (not in a slot of
 *          --jobs: `npm test` runs the eval gate so, which mostly waits on its cases' tool timeouts);
 *          its output is printed after the files', and its failure fails the run
 *
 * With CORDAGE_TEST_CPU set, each file's line also says the CPU seconds it and every process it
 * started used (GNU time), and the end the sum: unlike wall time, that does not grow with other load.
 */
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { basename, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildSync } from 'esbuild'
import { fileSize, longestFirst, nextDurations, readDurations, writeDurations } from './durations.ts'

const root = resolve(import.meta.dirname, '..')

/** The suite: each folder's *.test.ts (not recursive). */
const Suite = ['test', 'test/unit', 'test/security', ...readdirSync(join(root, 'plugins')).map((p) => `plugins/${p}/test`)]

/** Files that run alone, after the rest, and why. */
const Alone: Record<string, string> = {}

/** Where tsx keeps its compile cache (tsx: `os.tmpdir()/tsx-<uid>`). */
const TsxCache = join(tmpdir(), `tsx-${process.getuid?.() ?? 0}`)

/** How long each file took in a past run (seconds), for the order files start in. */
const DurationsFile = join(root, 'test/durations.json')

/** Under c8, coverage of the test file's process only, not of the processes it starts (why: that file). */
const OwnProcessCoverage = pathToFileURL(join(root, 'test/coverage/own-process.ts')).href

/** A file that runs longer than this is killed and counts as failed. */
const FileTimeoutMs = 15 * 60_000

interface Outcome {
  file: string
  ms: number
  ok: boolean
  output: string
  counts: string
  /** CPU seconds (user + system) of the file and what it started, with CORDAGE_TEST_CPU. */
  cpu?: number
}

function suiteFiles(): string[] {
  const files: string[] = []
  for (const dir of Suite) {
    let names: string[]
    try {
      names = readdirSync(join(root, dir))
    } catch {
      continue
    }
    for (const name of names.sort()) if (name.endsWith('.test.ts')) files.push(`${dir}/${name}`)
  }
  return files
}

interface Args {
  jobs: number
  verbose: boolean
  sources: boolean
  record: boolean
  commands: string[]
  files: string[]
}

function parseArgs(argv: string[]): Args {
  let jobs = Number(process.env.CORDAGE_TEST_JOBS) || availableParallelism() + 2
  let verbose = false
  let sources = false
  let record = false
  const commands: string[] = []
  const files: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--jobs') {
      jobs = Number(argv[++i])
      if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs takes a whole number >= 1, got ${argv[i]}`)
    } else if (arg === '--verbose') verbose = true
    else if (arg === '--sources') sources = true
    else if (arg === '--record-durations') record = true
    else if (arg === '--with') {
      const command = argv[++i]
      if (!command) throw new Error('--with takes a shell command, e.g. --with "npm run --silent eval:ci"')
      commands.push(command)
    } else if (arg.startsWith('--'))
      throw new Error(`unknown option ${arg}; options: --jobs N, --verbose, --sources, --record-durations, --with CMD`)
    else files.push(relative(root, resolve(arg)))
  }
  return { jobs, verbose, sources, record, commands, files: files.length ? files : suiteFiles() }
}

/**
 * Run one file in its own process (its own process group, so a timeout kills what it started too),
 * with a temp dir of its own: what is left there when it ends is that file's, and fails it.
 */
async function runFile(file: string, index: number, env: NodeJS.ProcessEnv, temp: string): Promise<Outcome> {
  // Short names: a Unix socket a test (or Chromium) makes in here must stay under 108 characters.
  const own = mkdtempSync(join(temp, `${index}-`))
  // Like /tmp: a test may run a process as another user (a folder it cannot read), which writes here too.
  chmodSync(own, 0o1777)
  // tsx keeps its compile cache in the temp dir: every file shares the usual one (a link the check skips).
  symlinkSync(TsxCache, join(own, basename(TsxCache)))
  // npm_command: `npx …` sets it to exec, which makes `cordage` hints say `npx cordage` (core/cli/self.ts);
  // the tests expect the hints of a checkout however the runner itself was started.
  const outcome = await runIn(file, { ...env, TMPDIR: own, npm_command: undefined })
  // tsx's caches (one per user: `tsx-<uid>`) are caches, not what a test made.
  const left = readdirSync(own).filter((name) => !/^tsx-\d+$/.test(name))
  rmSync(own, { recursive: true, force: true })
  if (!left.length) return outcome
  const shown = left.slice(0, 20).join(', ') + (left.length > 20 ? `, … (${left.length} in all)` : '')
  return {
    ...outcome,
    ok: false,
    output: `${outcome.output}\n[test/run.ts] ${file} left ${left.length} item(s) in its temp dir: ${shown}; every test removes what it creates (tempDir() in test/helpers.ts)\n`,
  }
}

function runIn(file: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  return runProcess(file, [process.execPath, '--import', 'tsx/esm', '--import', OwnProcessCoverage, '--test-reporter=spec', file], env)
}

/** A --with command, through the shell; not under coverage (c8 measures the tests). */
function runCommand(command: string): Promise<Outcome> {
  return runProcess(command, ['/bin/sh', '-c', command], { ...process.env, NODE_V8_COVERAGE: undefined })
}

function runProcess(file: string, argv: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
  const started = Date.now()
  return new Promise((done) => {
    // With CORDAGE_TEST_CPU set, GNU time reports the CPU seconds of the process and every process it started.
    const [command, args] = process.env.CORDAGE_TEST_CPU ? ['/usr/bin/time', ['-f', '[cpu] %U %S', ...argv]] : [argv[0], argv.slice(1)]
    const child = spawn(command, args, {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let output = ''
    child.stdout.on('data', (d) => {
      output += d
    })
    child.stderr.on('data', (d) => {
      output += d
    })
    const timer = setTimeout(() => {
      output += `\n[test/run.ts] ${file} ran longer than ${FileTimeoutMs / 60_000} minutes: killed\n`
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }, FileTimeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const count = (name: string) => new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(output)?.[1]
      const counts = `${count('tests') ?? '?'} tests, ${count('fail') ?? '?'} failed`
      const time = /^\[cpu\] ([\d.]+) ([\d.]+)$/m.exec(output)
      const cpu = time ? Number(time[1]) + Number(time[2]) : undefined
      done({ file, ms: Date.now() - started, ok: code === 0 && signal === null, output, counts, cpu })
    })
  })
}

async function pool(files: string[], jobs: number, temp: string, report: (o: Outcome) => void): Promise<Outcome[]> {
  const queue = [...files]
  const outcomes: Outcome[] = []
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const outcome = await runFile(file, files.indexOf(file), process.env, temp)
      outcomes.push(outcome)
      report(outcome)
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker))
  return outcomes
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/**
 * The checkout compiled as it ships (build/dist.ts), for the `cordage` commands the tests run
 * (test/bin.ts): a command starts in a third of the CPU time the sources take through tsx.
 */
function buildBin(): string {
  const out = join(root, '.test-dist')
  const started = Date.now()
  execFileSync(process.execPath, ['--import', 'tsx', join(root, 'build/dist.ts'), '--out', out], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    // The build is not under test: no coverage of it (or of the tsc it runs) under c8.
    env: { ...process.env, NODE_V8_COVERAGE: undefined },
  })
  console.log(`compiled the checkout for the commands the tests run (.test-dist/, ${seconds(Date.now() - started)})`)
  // The tests of the package itself (test/dist.test.ts, test/package-init.test.ts) copy this build (test/bin.ts).
  process.env.CORDAGE_TEST_DIST = out
  return join(out, 'core/cli/bin.js')
}

/**
 * Fixture plugins compiled to JavaScript for the commands the tests start, in the runner's temp dir
 * (test/bin.ts fixturePlugin). From TypeScript, every `cordage` process of the compiled checkout
 * registers tsx for them (measured: 15% of the CPU of a run of the crash tests' preset); fault-desk is
 * in the preset of FaultLab, whose tests start the most processes. Their imports of cordage, cordis
 * and zod resolve to the host's copies wherever they are (core/host/shared-modules-hook.mjs).
 */
const CompiledFixtures = ['fault-desk']

function compileFixtures(temp: string): string {
  const out = join(temp, 'fixtures')
  for (const name of CompiledFixtures) {
    const from = join(root, 'test/fixtures/plugins', name)
    const entryPoints = readdirSync(from)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(from, f))
    buildSync({ entryPoints, outdir: join(out, name), format: 'esm', platform: 'node', target: 'node20', logLevel: 'error' })
    // One file per source, imports left as written: theirs of each other end in .ts.
    for (const file of readdirSync(join(out, name))) {
      const path = join(out, name, file)
      writeFileSync(path, readFileSync(path, 'utf8').replace(/(from\s+["']\.\/[^"']+)\.ts(["'])/g, '$1.js$2'))
    }
  }
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n')
  return out
}

async function main(): Promise<number> {
  const { jobs, verbose, sources, record, commands, files: named } = parseArgs(process.argv.slice(2))
  const { durations, problem } = readDurations(DurationsFile)
  if (problem) console.log(`test/durations.json is not usable: ${problem}; files run in name order (--record-durations writes it)`)
  const files = problem ? named : longestFirst(named, durations, (file) => fileSize(root, file))
  // The --with commands start first: the type check and the lint run beside the build and the files.
  const beside = commands.map(runCommand)
  if (!sources) process.env.CORDAGE_TEST_BIN = buildBin()
  // Every file's temp dirs land in a folder of its own in here: os.tmpdir() reads TMPDIR.
  const temp = mkdtempSync(join(tmpdir(), 'cdg-'))
  chmodSync(temp, 0o755)
  if (!sources) process.env.CORDAGE_TEST_FIXTURES = compileFixtures(temp)
  mkdirSync(TsxCache, { recursive: true })
  const started = Date.now()
  const report = (o: Outcome) => {
    const cpu = o.cpu === undefined ? '' : `, ${o.cpu.toFixed(1)} s CPU`
    console.log(`${o.ok ? '✔' : '✖'} ${o.file} (${seconds(o.ms)}${cpu}; ${o.counts})`)
    if (verbose || !o.ok) console.log(o.output.replace(/^/gm, '    '))
  }
  const together = files.filter((f) => !Object.hasOwn(Alone, f))
  const alone = files.filter((f) => Object.hasOwn(Alone, f))
  console.log(`running ${files.length} test files, ${jobs} at a time${alone.length ? ` (${alone.length} alone after)` : ''}`)
  const outcomes = [...(await pool(together, jobs, temp, report)), ...(await pool(alone, 1, temp, report))]
  const besides = await Promise.all(beside)
  for (const o of besides) {
    console.log(`${o.ok ? '✔' : '✖'} ${o.file} (${seconds(o.ms)}${o.cpu === undefined ? '' : `, ${o.cpu.toFixed(1)} s CPU`})`)
    console.log(
      o.output
        .replace(/\[cpu\] .*\n?/, '')
        .trimEnd()
        .replace(/^/gm, '    '),
    )
  }

  const failed = [...outcomes, ...besides].filter((o) => !o.ok)
  console.log(`\nthe ten slowest files:`)
  for (const o of [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${seconds(o.ms).padStart(8)}  ${o.file}`)
  const cpus = outcomes.filter((o) => o.cpu !== undefined)
  const cpu = cpus.length ? ` (${cpus.reduce((sum, o) => sum + o.cpu!, 0).toFixed(0)} s of CPU)` : ''
  console.log(`\n${outcomes.length} files in ${seconds(Date.now() - started)}${cpu}, ${jobs} at a time; ${failed.length} failed`)
  for (const o of failed) console.log(`  ✖ ${o.file}`)

  rmSync(temp, { recursive: true, force: true })
  if (record) {
    writeDurations(
      DurationsFile,
      nextDurations(durations, outcomes, (file) => fileSize(root, file) > 0),
    )
    console.log(`wrote ${relative(root, DurationsFile)}`)
  }
  return failed.length ? 1 : 0
}

process.exitCode = await main()
