/**
 * Running the configured test command in a workspace: without a shell unless configured, in its own
 * process group (runProcess) that is killed whole on cancel or when its time limit passes, with a small
 * environment (minimalEnv): the tests run code the model wrote, and the harness's variables (provider
 * keys, NODE_TEST_CONTEXT of an outer test runner) do not belong there.
 */
import { minimalEnv, runProcess } from 'cordage'
import type { TestCommand } from './manifest.ts'

export interface TestRun {
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  durationMs: number
  /** The end of stdout then stderr. */
  tail: string
}

export function shownCommand(test: TestCommand): string {
  return typeof test.run === 'string' ? test.run : test.run.join(' ')
}

export async function runTestCommand(test: TestCommand, cwd: string, signal: AbortSignal, tailChars: number): Promise<TestRun> {
  const [command, ...args] = typeof test.run === 'string' ? ['/bin/sh', '-c', test.run] : test.run
  const timer = new AbortController()
  const timeout = setTimeout(() => timer.abort(new Error('timeout')), test.timeoutMs)
  const t0 = performance.now()
  try {
    const result = await runProcess(command, args, {
      cwd,
      signal: AbortSignal.any([signal, timer.signal]),
      env: minimalEnv(test.env, { inherit: test.inheritEnv }),
    })
    if (signal.aborted) throw signal.reason
    const text = [result.stdout.trimEnd(), result.stderr.trimEnd()].filter(Boolean).join('\n').trim()
    return {
      exitCode: result.code,
      signal: result.signal,
      timedOut: timer.signal.aborted,
      durationMs: Math.round(performance.now() - t0),
      tail: text.length > tailChars ? `…${text.slice(text.length - tailChars)}` : text,
    }
  } finally {
    clearTimeout(timeout)
  }
}
