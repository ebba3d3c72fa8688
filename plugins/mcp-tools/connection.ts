/**
 * One MCP server, kept connected. A connection is a client on a fresh transport; when it ends without
 * being asked to (the process exited, the HTTP server went away), the server is down: background
 * attempts reconnect with a doubling delay, and a call that finds it down tries at once. Each new
 * connection lists the tools again, as does a `notifications/tools/list_changed`, and hands the list
 * to `onTools` so the registry follows the server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ListToolsResultSchema, ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { CordageError, type ToolIO } from 'cordage'
import type { ServerSpec } from './config.ts'
import { classifyCallFailure, describeConnectFailure, isDisconnect } from './failures.ts'
import { CallResultSchema, type CallResult } from './result.ts'
import { describeHttpError, openTransport, type OpenedTransport } from './transports.ts'

/** The `_meta` key under which every call carries the kernel's idempotency key. */
export const IdempotencyKeyMeta = 'cordage/idempotencyKey'

/** What Cordage calls itself in the MCP handshake. */
const ClientInfo = { name: 'cordage-mcp-tools', version: '1.0.0' }

export interface ReconnectOptions {
  attempts: number
  initialDelayMs: number
  maxDelayMs: number
}

export interface ConnectionOptions {
  reconnect: ReconnectOptions
  /** Report a problem (`warn`, the default) or a change (`info`); the caller prefixes the server and removes secrets. */
  log: (message: string, level?: 'info' | 'warn') => void
  /** The server's tools, after each reconnect and each tools/list_changed. */
  onTools: (tools: McpTool[]) => void
}

interface Live {
  client: Client
  opened: OpenedTransport
  /** When it became live (epoch ms). */
  since: number
}

/** A connection that ends sooner than this after it was made counts as a failed attempt. */
const StableMs = 10_000

export class ServerConnection {
  private live?: Live
  private connecting?: Promise<{ live: Live; tools: McpTool[] }>
  private retryTimer?: NodeJS.Timeout
  private closed = false
  /** Why the server cannot be reached, for the next `tool_unavailable`. */
  private lastFailure = 'not connected yet'
  private listing: Promise<void> = Promise.resolve()
  /** Connections in a row that died soon after they were made: a server in a crash loop. */
  private quickLosses = 0

  constructor(
    readonly spec: ServerSpec,
    private options: ConnectionOptions,
  ) {}

  /**
   * The first connection, and the server's tools.
   * @throws CordageError `plugin_start_failed` saying what went wrong, where in the config, and the server's stderr
   */
  async start(): Promise<McpTool[]> {
    try {
      return (await this.connect(false)).tools
    } catch {
      throw new CordageError('plugin_start_failed', this.redact(`MCP server ${this.spec.where}: ${this.lastFailure}`))
    }
  }

  /**
   * Call a tool of the server. Rejects with `io.signal.reason` when the signal aborts, and otherwise
   * with a CordageError: `tool_connection_lost` (the connection ended during the call: outcome unknown),
   * `tool_unavailable` (the server could not be reached; nothing was sent), `tool_failed` (the server
   * refused the request) or `tool_timeout` (no answer, should the kernel's own time limit not fire).
   */
  async call(tool: string, args: Record<string, unknown>, io: ToolIO, timeoutMs: number): Promise<CallResult> {
    const signal = io.signal
    let live = await this.ready(signal, timeoutMs)
    for (let attempt = 1; ; attempt++) {
      try {
        return await live.client.request(
          { method: 'tools/call', params: { name: tool, arguments: args, _meta: { [IdempotencyKeyMeta]: io.idempotencyKey } } },
          CallResultSchema,
          // The kernel enforces the time limit through `signal` (the SDK then tells the server to stop);
          // this timeout is only a backstop.
          { signal, timeout: timeoutMs + 5000 },
        )
      } catch (error) {
        if (signal.aborted) throw signal.reason
        const failure = classifyCallFailure(error, {
          server: this.spec.name,
          tool,
          connectionLost: this.live !== live,
          ended: () => live.opened.ended(),
          stderr: () => live.opened.stderr(),
          redact: (text) => this.redact(text),
        })
        if (failure.kind === 'error') throw failure.error
        // The server cannot have seen this call: a stale connection. Reconnect and send it once more.
        if (attempt > 1)
          throw new CordageError(
            'tool_unavailable',
            this.redact(`MCP server "${this.spec.name}" could not be reached for ${tool}: ${failure.reason}`),
          )
        this.down(live, failure.reason)
        live = await this.ready(signal, timeoutMs)
      }
    }
  }

  /** Stop for good (the plugin is disposed): the process is told to stop now, calls in flight end. */
  close(): void {
    this.closed = true
    clearTimeout(this.retryTimer)
    this.live?.opened.kill()
    this.live = undefined
  }

  private async ready(signal: AbortSignal, timeoutMs: number): Promise<Live> {
    if (this.live) return this.live
    if (this.closed) throw new CordageError('tool_unavailable', `MCP server "${this.spec.name}" is closed: the plugin was stopped`)
    // Wait at most half the call's time limit: a server that does not come back then ends the call
    // as tool_unavailable (nothing was sent) instead of a timeout whose outcome would count as unknown.
    const waitMs = Math.min(this.spec.connectTimeoutMs, Math.floor(timeoutMs / 2))
    const outcome = await within(this.connect(true), waitMs, signal)
    if (signal.aborted) throw signal.reason
    if (outcome === 'timeout') {
      throw new CordageError(
        'tool_unavailable',
        `MCP server "${this.spec.name}" is down and did not come back within ${waitMs} ms, so nothing was sent`,
      )
    }
    if (outcome === 'failed') {
      throw new CordageError(
        'tool_unavailable',
        this.redact(`MCP server "${this.spec.name}" is down and reconnecting failed, so nothing was sent: ${this.lastFailure}`),
      )
    }
    return outcome.live
  }

  /** One attempt at a time: callers arriving meanwhile share it. */
  private connect(again: boolean): Promise<{ live: Live; tools: McpTool[] }> {
    if (!this.connecting) {
      const attempt = this.open()
        .then((opened) => {
          if (again) {
            this.options.log(`reconnected; ${opened.tools.length} tool(s)`, 'info')
            this.publish(opened.tools)
          }
          return opened
        })
        .finally(() => {
          if (this.connecting === attempt) this.connecting = undefined
        })
      // Background attempts may have no one waiting for them; their failure is kept in lastFailure.
      attempt.catch(() => {})
      this.connecting = attempt
    }
    return this.connecting
  }

  private async open(): Promise<{ live: Live; tools: McpTool[] }> {
    const opened = openTransport(this.spec)
    const client = new Client(ClientInfo, { capabilities: {} })
    const live: Live = { client, opened, since: 0 }
    // Until the connection is live, its failures belong to this attempt, not to the connection.
    let armed = false
    client.onclose = () => {
      if (armed) this.down(live, `${opened.ended()}.${opened.stderr()}`)
    }
    client.onerror = (error) => {
      if (armed) this.transportError(live, error)
    }
    try {
      await client.connect(opened.transport, { timeout: this.spec.connectTimeoutMs })
      const tools = client.getServerCapabilities()?.tools ? await listTools(client, this.spec.connectTimeoutMs) : []
      if (!client.transport) throw new Error(`${opened.ended()} right after the MCP handshake.${opened.stderr()}`)
      if (this.closed) throw new Error('the plugin was stopped while connecting')
      if (!client.getServerCapabilities()?.tools) this.options.log('the server offers no tools')
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist(live))
      armed = true
      live.since = Date.now()
      this.live = live
      this.lastFailure = ''
      return { live, tools }
    } catch (error) {
      this.lastFailure = describeConnectFailure(error, this.spec, opened)
      opened.kill()
      void client.close().catch(() => {})
      throw error
    }
  }

  /** The connection ended or cannot be used: forget it, and start reconnecting in the background. */
  private down(live: Live, reason: string): void {
    if (this.live !== live) return
    this.live = undefined
    this.lastFailure = reason
    void live.client.close().catch(() => {})
    if (this.closed) return
    // A server that keeps dying right after it starts uses up the background attempts, one per death,
    // instead of being restarted forever; calls still try on their own.
    this.quickLosses = Date.now() - live.since < StableMs ? this.quickLosses + 1 : 0
    const attempt = Math.max(0, this.quickLosses - 1)
    const giveUp = attempt >= this.options.reconnect.attempts
    this.options.log(
      `connection lost, ${giveUp ? `not reconnecting in the background (it died soon after connecting ${this.quickLosses} times in a row); the next call tries` : 'reconnecting'}: ${this.redact(reason)}`,
    )
    this.scheduleRetry(attempt)
  }

  private transportError(live: Live, error: Error): void {
    if (this.spec.endpoint.kind !== 'http' || !isDisconnect(error)) {
      this.options.log(`transport error: ${this.redact(error.message)}`)
      return
    }
    // Over HTTP nothing closes when the server dies: a broken stream or a refused request is how it
    // shows. The SDK reports a failed POST here before it rejects the request itself; closing at once
    // would turn "never sent" into "connection lost" for that call. So the call sees its own error first.
    const reason = `the connection to ${this.spec.endpoint.url.origin} broke (${describeHttpError(error)})`
    setImmediate(() => this.down(live, reason))
  }

  private scheduleRetry(attempt: number): void {
    const { attempts, initialDelayMs, maxDelayMs } = this.options.reconnect
    if (this.closed || attempt >= attempts) return
    clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined
        if (this.live || this.closed) return
        this.connect(true).catch(() => {
          this.options.log(`reconnect attempt ${attempt + 1} of ${attempts} failed: ${this.redact(this.lastFailure)}`)
          this.scheduleRetry(attempt + 1)
        })
      },
      Math.min(initialDelayMs * 2 ** attempt, maxDelayMs),
    )
    // A server that stays down must not keep the process alive.
    this.retryTimer.unref()
  }

  /** tools/list_changed: list again, one listing at a time so an older list never wins. */
  private relist(live: Live): void {
    this.listing = this.listing.then(async () => {
      if (this.live !== live) return
      try {
        const tools = await listTools(live.client, this.spec.connectTimeoutMs)
        if (this.live === live) this.publish(tools)
      } catch (error) {
        this.options.log(`listing tools after tools/list_changed failed: ${this.redact((error as Error).message)}`)
      }
    })
  }

  private publish(tools: McpTool[]): void {
    try {
      this.options.onTools(tools)
    } catch (error) {
      this.options.log(`updating the tools failed: ${this.redact((error as Error).message)}`)
    }
  }

  private redact(text: string): string {
    return this.spec.secrets.redact(text)
  }
}

async function listTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = []
  let cursor: string | undefined
  do {
    const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema, { timeout })
    tools.push(...page.tools)
    cursor = page.nextCursor
  } while (cursor)
  return tools
}

/** The promise's value, 'failed', or 'timeout' after `ms`; settles early (with 'failed') when `signal` aborts. */
function within<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | 'failed' | 'timeout'> {
  return new Promise((resolve) => {
    const done = (value: T | 'failed' | 'timeout') => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(value)
    }
    const onAbort = () => done('failed')
    const timer = setTimeout(() => done('timeout'), ms)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(done, () => done('failed'))
  })
}
