/**
 * The workers: real `cordage worker` processes (core/cli/bin.js, as users start it), each with the
 * statement probe preloaded. What each leaves behind: its exit, the events it printed (--json) and
 * the statements it sent.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { RunEvent } from 'cordage'
import type { Statement } from './statements.ts'

const root = resolve(import.meta.dirname, '../..')
const bin = join(root, 'core/cli/bin.js')
const probe = join(import.meta.dirname, 'probe.ts')

export interface WorkerResult {
  pid: number
  code: number | null
  signal: NodeJS.Signals | null
  stderr: string
  /** The run/end events this worker printed: the runs it drove to their end. */
  ended: string[]
  statements: Statement[]
}

interface Worker {
  child: ChildProcess
  ready: Promise<void>
  stderr(): string
  isReady(): boolean
  exit: Promise<WorkerResult>
}

export class Workers {
  private list: Worker[] = []

  constructor(
    presetFile: string,
    count: number,
    private probeDir: string,
    pollMs: number,
  ) {
    for (let i = 0; i < count; i++) this.list.push(this.start(presetFile, join(probeDir, `w${i}.json`), pollMs))
  }

  /** Resolves once every worker has answered its first claim: started, and polling. */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const late = this.list
          .filter((w) => !w.isReady())
          .map((w) => `worker ${w.child.pid}: ${w.stderr().trim() || '(nothing on stderr)'}`)
        reject(new Error(`${late.length} worker(s) did not start within ${timeoutMs} ms\n${late.join('\n')}`))
      }, timeoutMs)
    })
    try {
      await Promise.race([Promise.all(this.list.map((w) => w.ready)), late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** SIGTERM: each worker finishes its run in progress and exits; one that does not within the grace is killed. */
  async stop(graceMs: number): Promise<WorkerResult[]> {
    for (const w of this.list) w.child.kill('SIGTERM')
    const timer = setTimeout(() => {
      for (const w of this.list) if (w.child.exitCode === null) w.child.kill('SIGKILL')
    }, graceMs)
    try {
      return await Promise.all(this.list.map((w) => w.exit))
    } finally {
      clearTimeout(timer)
      rmSync(this.probeDir, { recursive: true, force: true })
    }
  }

  private start(presetFile: string, probeFile: string, pollMs: number): Worker {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', probe, bin, 'worker', '--preset', presetFile, '--poll', String(pollMs), '--json'],
      { cwd: root, env: { ...process.env, NO_COLOR: '1', SCALE_OUT_PROBE: probeFile }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let stdout = ''
    let stderr = ''
    let started = false
    let onReady: () => void = () => {}
    let onEarlyExit: (error: Error) => void = () => {}
    const ready = new Promise<void>((resolve, reject) => {
      onReady = resolve
      onEarlyExit = reject
    })
    // Never unhandled: a worker that dies after it was ready is reported by stop() and the proofs.
    ready.catch(() => {})
    child.stdout!.on('data', (d) => {
      stdout += d
    })
    child.stderr!.on('data', (d) => {
      stderr += d
      if (!started && stderr.includes('scale-out: ready')) {
        started = true
        onReady()
      }
    })
    const exit = new Promise<WorkerResult>((done) =>
      child.on('close', (code, signal) => {
        onEarlyExit(new Error(`worker ${child.pid} exited before it polled (${signal ?? `exit ${code}`}): ${stderr.trim()}`))
        const ended = stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as RunEvent)
          .filter((e) => e.type === 'run/end')
          .map((e) => e.runId)
        const statements = existsSync(probeFile) ? (JSON.parse(readFileSync(probeFile, 'utf8')).statements as Statement[]) : []
        done({ pid: child.pid ?? 0, code, signal, stderr, ended, statements })
      }),
    )
    return { child, ready, exit, stderr: () => stderr, isReady: () => started }
  }
}
