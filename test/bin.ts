/**
 * The `cordage` binary the tests run as a child process. test/run.ts compiles this checkout once per
 * suite run (build/dist.ts into .test-dist/, the package as it ships) and points CORDAGE_TEST_BIN at it:
 * a command then starts in a third of the CPU time the TypeScript sources take through tsx, and the
 * suite runs hundreds of them. A test file run on its own runs the sources (core/cli/bin.js).
 */
import { resolve } from 'node:path'

export const root = resolve(import.meta.dirname, '..')

export const cordageBin = process.env.CORDAGE_TEST_BIN || resolve(root, 'core/cli/bin.js')

/**
 * The binary of the sources, always: for a test that goes on, in a process, with runs it started in
 * its own (from the sources). The compiled plugins hash differently from their sources, so the
 * compiled binary would see every such run as started under other plugins (version drift).
 */
export const sourceBin = resolve(root, 'core/cli/bin.js')
