/**
 * @module process
 * Running a child process from a tool so that cancellation reaches all of it. The child gets its own
 * process group; when the tool's signal aborts (cancel, timeout), the whole group gets SIGTERM and,
 * if it is still there after `killAfterMs`, SIGKILL. Killing only the direct child would leave its
 * children (a shell's `sleep`, a build's workers) running, and possibly still changing things.
 */
import { spawn } from 'node:child_process'
import { CordageError } from './errors.ts'

export interface ProcessOptions {
  /** The tool's `io.signal`: aborting it kills the process group. */
  signal: AbortSignal
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Grace between SIGTERM and SIGKILL. Default 500 ms. */
  killAfterMs?: number
  /** Keep at most this many characters of stdout and of stderr. Default 1 MB. */
  maxOutput?: number
}

export interface ProcessResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** The process group id (the child's pid), for checking that it is gone. */
  pid: number
}

/**
 * Run `command` with `args` in its own process group.
 * Contract: resolves when the process exits, however it exits; rejects only when it cannot start
 * (CordageError `tool_failed`). When `signal` aborts, the whole group is killed and the result says so.
 */
export function runProcess(command: string, args: string[], options: ProcessOptions): Promise<ProcessResult> {
  const max = options.maxOutput ?? 1_000_000
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => { if (stdout.length < max) stdout += d })
    child.stderr!.on('data', (d) => { if (stderr.length < max) stderr += d })
    let killTimer: ReturnType<typeof setTimeout> | undefined
    const killGroup = (sig: NodeJS.Signals) => {
      try { process.kill(-child.pid!, sig) } catch { /* the group is already gone */ }
    }
    const onAbort = () => {
      killGroup('SIGTERM')
      killTimer = setTimeout(() => killGroup('SIGKILL'), options.killAfterMs ?? 500)
      killTimer.unref?.()
    }
    child.on('error', (error) => {
      options.signal.removeEventListener('abort', onAbort)
      reject(new CordageError('tool_failed', `cannot start ${command}: ${error.message}`, { cause: error }))
    })
    child.on('close', (code, signal) => {
      options.signal.removeEventListener('abort', onAbort)
      // The direct child is gone; make sure nothing of its group outlives an abort.
      if (options.signal.aborted) { clearTimeout(killTimer); killGroup('SIGKILL') }
      resolve({ code, signal, stdout, stderr, pid: child.pid! })
    })
    if (options.signal.aborted) onAbort()
    else options.signal.addEventListener('abort', onAbort, { once: true })
  })
}
