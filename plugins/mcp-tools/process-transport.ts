/**
 * MCP over a child process's stdin/stdout, with the SDK's framing. The SDK has a stdio transport of
 * its own; this one exists for three things it does not give: the server runs in a process group of
 * its own, so stopping it stops whatever it started (`npx` and its child, a shell and its jobs); how
 * the process ended (exit code or signal) is kept for error messages; and stderr is kept as a tail.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { StdioEndpoint } from './config.ts'
import { StderrTail } from './stderr-tail.ts'

/** A message could not even be written: the server never saw it. */
export class NotSentError extends Error {
  override name = 'NotSentError'
}

/** How long a server gets to exit on its own after its stdin closes, then after SIGTERM. */
const GraceMs = 1000

export class ProcessTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  readonly stderr = new StderrTail()
  /** Set once the process has exited. */
  exit?: { code: number | null; signal: NodeJS.Signals | null }
  private child?: ChildProcessWithoutNullStreams
  private buffer = new ReadBuffer()

  constructor(private endpoint: StdioEndpoint) {}

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    const { command, args, env, cwd } = this.endpoint
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { cwd, env: { ...getDefaultEnvironment(), ...env }, stdio: 'pipe', detached: true })
      this.child = child
      let spawned = false
      child.once('spawn', () => {
        spawned = true
        resolve()
      })
      child.on('error', (error) => {
        if (spawned) this.onerror?.(error)
        else reject(error)
      })
      child.stdout.on('data', (chunk: Buffer) => this.read(chunk))
      child.stderr.on('data', (chunk: Buffer) => this.stderr.push(chunk))
      // Writing to a server that just died fails with EPIPE; the 'close' that follows says what happened.
      child.stdin.on('error', () => {})
      child.once('exit', (code, signal) => {
        this.exit = { code, signal }
      })
      child.once('close', () => {
        if (this.child === child) this.child = undefined
        this.onclose?.()
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (!stdin?.writable) return Promise.reject(new NotSentError('the server process is not running'))
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', () => resolve())
    })
  }

  /** Close stdin (the MCP way to ask a stdio server to stop), then SIGTERM, then SIGKILL the group. */
  async close(): Promise<void> {
    const child = this.child
    if (!child) return
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
    child.stdin.end()
    if (await within(closed, GraceMs)) return
    this.signal('SIGTERM')
    if (await within(closed, GraceMs)) return
    this.signal('SIGKILL')
  }

  /** Stop the server now, without waiting: for a plugin being disposed, which cannot wait. */
  kill(): void {
    this.child?.stdin.end()
    this.signal('SIGTERM')
    const child = this.child
    if (child)
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) this.signal('SIGKILL', child.pid)
      }, GraceMs).unref()
  }

  /** "exited with code 3", "was killed by SIGKILL", or "is running". */
  describeExit(): string {
    if (!this.exit) return this.child ? 'is running' : 'closed its output'
    return this.exit.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk)
    } catch (error) {
      // A message over the buffer limit: the stream cannot be resynchronised, so the connection ends.
      this.onerror?.(error as Error)
      void this.close()
      return
    }
    for (;;) {
      let message: JSONRPCMessage | null
      try {
        message = this.buffer.readMessage()
      } catch (error) {
        // A line that is not JSON-RPC (a stray console.log in the server): report it, keep reading.
        this.onerror?.(error as Error)
        continue
      }
      if (message === null) return
      this.onmessage?.(message)
    }
  }

  private signal(signal: NodeJS.Signals, pid = this.child?.pid): void {
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      // Already gone.
    }
  }
}

function within(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    promise.then(() => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}
