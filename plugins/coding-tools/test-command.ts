/**
 * Running the configured test command in a workspace: without a shell unless configured, in its own
 * process group (runProcess) that is killed whole on cancel or when its time limit passes, with a small
 * environment. The environment is small on purpose: the tests run code the model wrote, and the
 * harness's variables (provider keys, NODE_TEST_CONTEXT of an outer test runner) do not belong there.
 */
import { runProcess } from 'cordage'
import type { TestCommand } from './manifest.ts'

const Passed = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'WINDIR',
]

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
    const result = await runProcess(command, args, { cwd, signal: AbortSignal.any([signal, timer.signal]), env: environment(test) })
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

function environment(test: TestCommand): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  if (test.inheritEnv) Object.assign(env, process.env)
  else for (const name of Passed) if (process.env[name] !== undefined) env[name] = process.env[name]
  return { ...env, ...test.env }
}
