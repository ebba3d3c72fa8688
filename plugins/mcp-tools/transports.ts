/**
 * One attempt to reach a server: a fresh transport for its endpoint, and what it can tell afterwards
 * about why it ended. A reconnect opens a new one; transports are never reused.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ServerSpec } from './config.ts'
import { ProcessTransport } from './process-transport.ts'

export interface OpenedTransport {
  transport: Transport
  /** How it ended, for messages: "the server process exited with code 3". Not yet redacted. */
  ended(): string
  /**
   * What the server last wrote to stderr, to follow a sentence: " Its stderr ends with:\n    …", or ''
   * (over HTTP, or when it wrote nothing). Not yet redacted.
   */
  stderr(): string
  /** Stop it now, without waiting; its client sees the transport close. */
  kill(): void
}

export function openTransport(spec: ServerSpec): OpenedTransport {
  const endpoint = spec.endpoint
  if (endpoint.kind === 'stdio') {
    const transport = new ProcessTransport(endpoint)
    return {
      transport,
      ended: () => `the server process ${transport.describeExit()}`,
      stderr: () => {
        const tail = transport.stderr.lines()
        return tail ? ` Its stderr ends with:\n    ${tail.split('\n').join('\n    ')}` : ''
      },
      kill: () => transport.kill(),
    }
  }
  const transport = new StreamableHTTPClientTransport(endpoint.url, {
    requestInit: { headers: endpoint.headers },
    // The connection reconnects as a whole (see connection.ts); the SDK's own retries of its event
    // stream would only delay noticing that the server is gone.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  })
  let lastError: string | undefined
  // Set before the client connects: the client keeps this handler and adds its own.
  transport.onerror = (error) => {
    lastError = describeHttpError(error)
  }
  return {
    transport,
    ended: () => `the connection to ${endpoint.url.origin} ended${lastError ? ` (${lastError})` : ''}`,
    stderr: () => '',
    kill: () => {
      // Tell the server the session is over so it can free it (best effort, briefly), then close,
      // which also ends the calls still waiting.
      const close = () => {
        void transport.close().catch(() => {})
      }
      const fallback = setTimeout(close, 1000)
      void transport
        .terminateSession()
        .catch(() => {})
        .finally(() => {
          clearTimeout(fallback)
          close()
        })
    },
  }
}

/**
 * An HTTP-level failure in a few words. fetch says only "fetch failed"; what failed is in its causes
 * (a network error code, "bad port", "other side closed").
 */
export function describeHttpError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const details = [innermostMessage(error), networkCode(error)].filter((d): d is string => !!d && !message.includes(d))
  return details.length ? `${message}: ${[...new Set(details)].join(', ')}` : message
}

function innermostMessage(error: unknown): string | undefined {
  let found: string | undefined
  for (let e: unknown = (error as { cause?: unknown })?.cause, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    found = e.message || found
  return found
}

/** ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…: the code of the network error behind a failed fetch. */
export function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
  }
  return undefined
}
