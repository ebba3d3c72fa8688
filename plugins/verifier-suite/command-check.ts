/**
 * The command check: run a command in the run's workspace (or a configured folder) and judge its exit
 * code. The command is an argument list, run without a shell unless the config says `shell: true`. It
 * runs in its own process group (runProcess), which is killed whole when the run is cancelled or the
 * check's time limit passes. The exit code and the tail of the output become evidence, or the reason.
 */
import { existsSync } from 'node:fs'
import { CordageError, minimalEnv, runProcess, type Evidence } from 'cordage'
import { leafFailure, type Check, type CheckInput, type CheckResult, type LeafTraits } from './check.ts'
import type { CommandSpec } from './config.ts'
import { oneLineTail, outputTail } from './output-tail.ts'

/** Characters of output kept in an evidence ref. */
const RefChars = 200

/** Where a run's command runs: its workspace, or a fixed folder. */
export type CwdOf = (runId: string) => Promise<string>

export class CommandCheck implements Check {
  private argv: [string, ...string[]]
  readonly shown: string

  constructor(
    private leaf: LeafTraits,
    private options: CommandSpec,
    private cwdOf: CwdOf,
  ) {
    const run = options.run
    this.argv = typeof run === 'string' ? ['/bin/sh', '-c', run] : [run[0], ...run.slice(1)]
    this.shown = typeof run === 'string' ? run : run.join(' ')
  }

  get label() {
    return this.leaf.label
  }

  async run({ state, signal }: CheckInput): Promise<CheckResult> {
    signal.throwIfAborted()
    const { timeoutMs, expectExit, tailChars, maxOutput } = this.options
    const cwd = await this.cwdOf(state.runId)
    // Said here because the process would only report ENOENT about the shell it could not start there.
    if (!existsSync(cwd))
      throw new CordageError(
        'plugin_config_invalid',
        `verifier-suite: the command check \`${this.shown}\` runs in ${cwd}, which does not exist; fix its cwd (relative paths follow the preset's folder)`,
      )
    const timer = new AbortController()
    const timeout = setTimeout(() => timer.abort(new Error('timeout')), timeoutMs)
    const t0 = performance.now()
    let result
    try {
      result = await runProcess(this.argv[0], this.argv.slice(1), {
        cwd,
        signal: AbortSignal.any([signal, timer.signal]),
        env: minimalEnv(this.options.env, { inherit: this.options.inheritEnv }),
        maxOutput,
      })
    } finally {
      clearTimeout(timeout)
    }
    // Cancelled: the process group is gone; the run ends CANCELLED, so no verdict is given.
    if (signal.aborted) throw signal.reason
    const ms = Math.round(performance.now() - t0)
    const tail = outputTail(result.stdout, result.stderr, tailChars)
    const shownOutput = tail ? ` Output (end):\n${tail}\n` : ' It printed nothing.'
    if (timer.signal.aborted) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `\`${this.shown}\` did not finish within ${timeoutMs} ms and was stopped (its whole process group was killed).${shownOutput}`,
        'Make sure it finishes: look for an endless loop or something that waits forever.',
        [{ kind: 'command', ref: `timeout ${timeoutMs} ms` }],
      )
    }
    const exit = result.code ?? `signal ${result.signal}`
    const printed = oneLineTail(result.stdout, result.stderr, RefChars)
    const evidence: Evidence[] = [{ kind: 'command', ref: printed ? `exit ${exit}: ${printed}` : `exit ${exit}` }]
    if (result.code !== expectExit) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `\`${this.shown}\` exited ${exit} after ${ms} ms, expected ${expectExit}.${shownOutput}`,
        `Fix what the output points at, so that \`${this.shown}\` exits ${expectExit}.`,
        evidence,
      )
    }
    return { ok: true, evidence }
  }
}
