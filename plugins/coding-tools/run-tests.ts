/**
 * run_tests: run the workspace's test command and report the exit code and the end of the output. A
 * failing test run is a result, not a tool failure: it is what the model needs to see.
 *
 * Side effect `local`: the tests run code in the workspace, which the model may have written, and code
 * can write files. Calling that `none` would let a read-only policy rule run it unasked. The coding
 * preset allows it by name instead, since every edit it runs was approved. Idempotent: a second run
 * under the same key leaves nothing the first did not.
 */
import { z } from 'zod'
import { defineTool, type Tool } from 'cordage'
import type { Config } from './manifest.ts'
import type { DirOf } from './read-files.ts'
import { runTestCommand, shownCommand } from './test-command.ts'

/** Headroom between the command's own limit and the kernel's, so a slow suite ends as a result, not as tool_timeout. */
const KernelMarginMs = 5000

export function runTestsTool(dirOf: DirOf, config: Config): Tool {
  const shown = shownCommand(config.test)
  return defineTool({
    name: 'run_tests',
    description: `Run the workspace's tests (${shown}) and report the exit code and the end of the output.`,
    input: z.object({}).strict(),
    sideEffect: 'local',
    idempotent: true,
    timeoutMs: config.test.timeoutMs + KernelMarginMs,
    run: async (_args, io) => {
      const run = await runTestCommand(config.test, await dirOf(io.runId), io.signal, config.tailChars)
      const verdict = run.timedOut
        ? `tests timed out: \`${shown}\` was stopped after ${config.test.timeoutMs} ms`
        : run.exitCode === 0
          ? `tests passed: \`${shown}\` exited 0 in ${run.durationMs} ms`
          : `tests failed: \`${shown}\` exited ${run.exitCode ?? `on signal ${run.signal}`} in ${run.durationMs} ms`
      return { output: run, observation: `${verdict}\n${run.tail}` }
    },
  })
}
