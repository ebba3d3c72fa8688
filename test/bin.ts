/**
 * The `cordage` binary the tests run as a child process. test/run.ts compiles this checkout once per
 * suite run (build/dist.ts into .test-dist/, the package as it ships) and points CORDAGE_TEST_BIN at it:
 * a command then starts in a third of the CPU time the TypeScript sources take through tsx, and the
 * suite runs hundreds of them. A test file run on its own runs the sources (core/cli/bin.js).
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '..')

export const cordageBin = process.env.CORDAGE_TEST_BIN || resolve(root, 'core/cli/bin.js')

/**
 * The binary of the sources, always: for a test that goes on, in a process, with runs it started in
 * its own (from the sources). The compiled plugins hash differently from their sources, so the
 * compiled binary would see every such run as started under other plugins (version drift).
 */
export const sourceBin = resolve(root, 'core/cli/bin.js')

/**
 * The package test/run.ts built for this suite run (build/dist.ts into .test-dist/), or undefined when
 * a file runs on its own or with --sources. The tests of the package itself copy it instead of running
 * the same build on the same checkout again (tsc over the whole project: a minute of CPU each).
 */
export const suiteDist = process.env.CORDAGE_TEST_DIST || undefined

/** build/dist.ts into `out`, as `npm run build` makes it: a copy of the suite's build when there is one. */
export function buildPackage(out: string): void {
  if (suiteDist) {
    rmSync(out, { recursive: true, force: true })
    cpSync(suiteDist, out, { recursive: true })
    return
  }
  execFileSync(process.execPath, ['--import', 'tsx', resolve(root, 'build/dist.ts'), '--out', out], { cwd: root, stdio: 'pipe' })
}

/**
 * A fixture plugin's folder (test/fixtures/plugins/NAME), for a preset the `cordage` commands load:
 * compiled to JavaScript when test/run.ts did so (its CompiledFixtures), which spares every such
 * process registering tsx; else the sources.
 */
export function fixturePlugin(name: string): string {
  const compiled = process.env.CORDAGE_TEST_FIXTURES && join(process.env.CORDAGE_TEST_FIXTURES, name)
  return compiled && existsSync(compiled) ? compiled : resolve(root, 'test/fixtures/plugins', name)
}
