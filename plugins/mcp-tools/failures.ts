/**
 * What a failure talking to a server means for the run. The question that matters is whether the
 * server may have acted on the call: if it cannot have (the message was never sent, the session was
 * unknown to it), the call can be sent again after reconnecting; if it may have, the outcome is
 * unknown (`tool_connection_lost`) and the kernel decides what that means for the tool's contract.
 */
import { existsSync } from 'node:fs'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { CordageError } from 'cordage'
import type { ServerSpec } from './config.ts'
import { NotSentError } from './process-transport.ts'
import { describeHttpError, networkCode, type OpenedTransport } from './transports.ts'

export type CallFailure =
  /** The server cannot have seen the call: reconnect and send it again. */
  { kind: 'not-sent'; reason: string } | { kind: 'error'; error: CordageError }

export interface CallFacts {
  server: string
  tool: string
  /** The connection the call went out on ended while the call was pending. */
  connectionLost: boolean
  /** How it ended (exit code or network error), and the server's last stderr (see OpenedTransport). */
  ended: () => string
  stderr: () => string
  /** Takes secrets out of a message. */
  redact: (text: string) => string
}

export function classifyCallFailure(error: unknown, facts: CallFacts): CallFailure {
  const { server, tool } = facts
  const lost = (text: string): CallFailure => ({ kind: 'error', error: new CordageError('tool_connection_lost', facts.redact(text)) })
  const fail = (code: 'tool_unavailable' | 'tool_timeout' | 'tool_failed', text: string): CallFailure => ({
    kind: 'error',
    error: new CordageError(code, facts.redact(text)),
  })
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && facts.connectionLost) {
    return lost(
      `MCP server "${server}" went away during the call of ${tool}: ${facts.ended()}. Whether the call took effect is unknown.${facts.stderr()}`,
    )
  }
  if (notSent(error)) return { kind: 'not-sent', reason: message }
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0
    if (status >= 400 && status < 500) {
      return fail('tool_unavailable', `MCP server "${server}" refused the call of ${tool} with HTTP ${status}: ${message}`)
    }
    return lost(
      `MCP server "${server}" answered the call of ${tool} with HTTP ${status || 'error'}: ${message}. Whether the call took effect is unknown.`,
    )
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return fail('tool_timeout', `MCP server "${server}" did not answer the call of ${tool} in time`)
    // A JSON-RPC error: the server refused the request itself (unknown tool, bad params) and did not run it.
    return fail('tool_failed', `MCP server "${server}" refused the call of ${tool}: ${message}`)
  }
  if (networkCode(error) || message === 'fetch failed' || message === 'terminated') {
    return lost(
      `the connection to MCP server "${server}" broke during the call of ${tool} (${describeHttpError(error)}). Whether the call took effect is unknown.`,
    )
  }
  return fail('tool_failed', `calling ${tool} on MCP server "${server}" failed: ${message}`)
}

/** True when the request cannot have reached the server. */
function notSent(error: unknown): boolean {
  if (error instanceof NotSentError) return true
  // The SDK's Protocol says this when the transport had already closed before the request was sent.
  if (error instanceof Error && error.message === 'Not connected') return true
  // Refused connections accept nothing; a 404 on a session means the server no longer knows it and
  // MCP says to start a new session (the request was not processed).
  if (networkCode(error) === 'ECONNREFUSED') return true
  return error instanceof StreamableHTTPError && error.code === 404
}

/**
 * An HTTP transport error that means the server is gone or has forgotten the session: a broken event
 * stream (the SDK's own stream retries are off, so giving up on one says the same), a network error,
 * or a 404 for the session.
 */
export function isDisconnect(error: Error): boolean {
  if (/^(SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect)/.test(error.message)) return true
  if (error instanceof StreamableHTTPError) return error.code === 404
  return networkCode(error) !== undefined || error.message === 'fetch failed'
}

/** Why connecting failed, in terms of the config: what was wrong, where, and what to try. */
export function describeConnectFailure(error: unknown, spec: ServerSpec, opened: OpenedTransport): string {
  const message = error instanceof Error ? error.message : String(error)
  const { where, endpoint } = spec
  if (endpoint.kind === 'stdio') {
    const code = networkCode(error)
    if (code === 'ENOENT' && !existsSync(endpoint.cwd)) {
      return `the working directory ${endpoint.cwd} does not exist; check ${where}.cwd (relative to the preset's folder)`
    }
    if (code === 'ENOENT') {
      return `cannot start "${endpoint.command}": no such program${endpoint.command.includes('/') ? '' : ' on PATH'}; check ${where}.command${endpoint.command.includes('/') ? " (a path is relative to the preset's folder)" : ''}`
    }
    if (code === 'EACCES') return `cannot start "${endpoint.command}": it is not executable; check ${where}.command`
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `the server did not complete the MCP handshake within ${spec.connectTimeoutMs} ms (${where}.connectTimeoutMs).${opened.stderr()}`
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return `${opened.ended()} before the MCP handshake completed; check ${where}.command and args.${opened.stderr()}`
    }
    return `${message}; ${opened.ended()}.${opened.stderr()}`
  }
  const url = endpoint.url.href
  if (networkCode(error) === 'ECONNREFUSED')
    return `nothing accepts connections at ${url} (ECONNREFUSED); is the server running? (${where}.url)`
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    return `${url} refused the connection with HTTP ${error.code}; check the credentials in ${where}.headers`
  }
  if (error instanceof StreamableHTTPError && error.code === 404)
    return `${url} answered HTTP 404; check the endpoint path in ${where}.url (often /mcp)`
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `${url} did not complete the MCP handshake within ${spec.connectTimeoutMs} ms (${where}.connectTimeoutMs)`
  }
  return `cannot connect to ${url}: ${describeHttpError(error)}; check ${where}.url`
}
