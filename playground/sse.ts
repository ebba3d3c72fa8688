/**
 * @module playground/sse
 * Server-Sent Events on a plain node:http response: the headers, one frame per event with its `id`
 * (a run event's `seq`), comments as heartbeats, and the cursor a client resumes from.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { CordageError } from 'cordage'

export interface SseStream {
  send(event: string, data: unknown, id?: number): void
  /** False once the client went away. */
  readonly open: boolean
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal
  close(): void
}

/**
 * Where a client resumes: the `Last-Event-ID` header (an EventSource reconnecting on its own) wins over
 * `?after=SEQ` (a page that kept its events and opens a new stream); 0 when neither is given.
 * @throws CordageError `invalid_input` when either is not a whole number ≥ 0
 */
export function cursorOf(req: IncomingMessage, url: URL): number {
  const header = req.headers['last-event-id']
  const raw = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('after') ?? '0'
  const after = Number(raw)
  if (raw.trim() === '' || !Number.isInteger(after) || after < 0) {
    throw new CordageError('invalid_input', `the cursor (Last-Event-ID or ?after) must be a whole number ≥ 0, got ${JSON.stringify(raw)}`)
  }
  return after
}

export function openSse(req: IncomingMessage, res: ServerResponse, heartbeatMs = 15_000): SseStream {
  const controller = new AbortController()
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  // Reconnect quickly after a dropped connection; the browser sends Last-Event-ID itself.
  res.write('retry: 1000\n\n')
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs)
  const closed = () => {
    clearInterval(heartbeat)
    controller.abort()
  }
  req.on('close', closed)
  res.on('close', closed)
  return {
    get open() {
      return !controller.signal.aborted && !res.writableEnded
    },
    signal: controller.signal,
    send(event, data, id) {
      if (res.writableEnded) return
      res.write(`${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    },
    close() {
      closed()
      if (!res.writableEnded) res.end()
    },
  }
}
