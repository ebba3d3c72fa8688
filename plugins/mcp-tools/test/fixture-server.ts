/**
 * For the tests: the fixture MCP server (test/fixtures/mcp/server.mjs) as a config entry or as an HTTP
 * process, what it logged, and a check that none of its processes outlived the test.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Tool, ToolResult } from 'cordage'
import { invokeTool } from '../../../test/tool-harness.ts'

export const FixtureServer = resolve(import.meta.dirname, '../../../test/fixtures/mcp/server.mjs')

export interface FixtureFiles {
  /** Every tools/call the server received (one JSON line each). */
  log: string
  /** Every pid the server ran as. */
  pids: string
  /** "v2" in it switches the server to its second tool set when it (re)starts. */
  variant: string
}

export function fixtureFiles(dir: string): FixtureFiles {
  return { log: join(dir, 'calls.jsonl'), pids: join(dir, 'pids.txt'), variant: join(dir, 'variant.txt') }
}

export function fixtureEnv(files: FixtureFiles, extra: Record<string, string> = {}): Record<string, string> {
  return { MCP_FIXTURE_LOG: files.log, MCP_FIXTURE_PIDS: files.pids, MCP_FIXTURE_VARIANT: files.variant, ...extra }
}

/** The config entry of a stdio fixture server named `name`. */
export function stdioServer(files: FixtureFiles, options: Record<string, unknown> = {}, name = 'fixture') {
  const { env, ...rest } = options as { env?: Record<string, string> }
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [FixtureServer],
    env: fixtureEnv(files, env),
    connectTimeoutMs: 10_000,
    ...rest,
  }
}

export interface LoggedCall {
  tool: string
  args?: Record<string, unknown>
  key?: string
  pid: number
  effect?: boolean
  call?: boolean
  cancelled?: boolean
  note?: string
}

export function loggedCalls(files: FixtureFiles): LoggedCall[] {
  if (!existsSync(files.log)) return []
  return readFileSync(files.log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LoggedCall)
}

/** Calls of `tool` that reached the server. */
export function callsOf(files: FixtureFiles, tool: string): LoggedCall[] {
  return loggedCalls(files).filter((c) => c.call && c.tool === tool)
}

/** Effects (appended notes) the server made. */
export function effects(files: FixtureFiles): LoggedCall[] {
  return loggedCalls(files).filter((c) => c.effect)
}

export function serverPids(files: FixtureFiles): number[] {
  if (!existsSync(files.pids)) return []
  return readFileSync(files.pids, 'utf8').split('\n').filter(Boolean).map(Number)
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Resolves once none of the pids is running. After `ms` it kills the survivors (so a leak fails the
 * test instead of keeping the test process alive) and rejects naming them.
 */
export async function allExited(pids: number[], ms = 4000): Promise<void> {
  const until = Date.now() + ms
  while (pids.some(alive)) {
    if (Date.now() > until) {
      const survivors = pids.filter(alive)
      for (const pid of survivors) process.kill(pid, 'SIGKILL')
      throw new Error(`server processes still running after ${ms} ms: ${survivors.join(', ')}`)
    }
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Run a tool the way the kernel does: in a run, after a recorded decision, with a ticket for exactly these arguments. */
export function invoke(
  tool: Tool,
  args: unknown,
  options: { signal?: AbortSignal; actionId?: string; runId?: string } = {},
): Promise<ToolResult> {
  return invokeTool(tool, args, { runId: options.runId ?? 'r', actionId: options.actionId, signal: options.signal })
}

export interface HttpFixture {
  port: number
  url: string
  child: ChildProcess
  /** SIGKILL it and wait until it is gone. */
  kill(): Promise<void>
}

/** The fixture in HTTP mode, on `port` (0: any free one), once it accepts connections. */
export function startHttpFixture(files: FixtureFiles, port = 0, env: Record<string, string> = {}): Promise<HttpFixture> {
  const child = spawn(process.execPath, [FixtureServer, '--http', String(port)], {
    env: { ...process.env, ...fixtureEnv(files, env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolvePromise, reject) => {
    let out = ''
    let err = ''
    child.stderr!.on('data', (chunk) => {
      err += chunk
    })
    child.stdout!.on('data', (chunk) => {
      out += chunk
      const found = /listening (\d+)/.exec(out)
      if (!found) return
      const actual = Number(found[1])
      resolvePromise({
        port: actual,
        url: `http://127.0.0.1:${actual}/mcp`,
        child,
        kill: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done()
            child.once('exit', () => done())
            child.kill('SIGKILL')
          }),
      })
    })
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code} before listening: ${err}`)))
  })
}
