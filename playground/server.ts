/**
 * @module playground/server
 * The playground: a node:http server on loopback that serves the page in playground/public and the
 * JSON API under /api, over one Cordage app loaded from a preset. Only 127.0.0.1 is bound, and
 * requests must name this host (no DNS rebinding) and, when they say where they come from (`Origin`),
 * come from this origin. Every /api request must carry the secret token of this process
 * (playground/auth.ts), printed in the URL at start, so another local user can neither read runs nor
 * change anything. State-changing calls take JSON bodies only; with `readOnly` they are refused. With
 * `watch`, the plugin folders of the preset's agents are watched and hot-reloaded as under `cordage dev`
 * (core/host/dev.ts), and each `plugin/reloaded` reaches the page through the plugin event feed.
 *
 * @example
 * const playground = await startPlayground({ preset: 'presets/default.yml', port: 0 })
 * console.log(playground.url) // http://127.0.0.1:41234/?token=9rWq…
 * await fetch(`${playground.origin}/api/agents`, { headers: { authorization: `Bearer ${playground.token}` } })
 * await playground.close()
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { readFile } from 'node:fs/promises'
import { extname, join, normalize, resolve } from 'node:path'
import { Context } from 'cordis'
import { CordageError } from 'cordage'
import { Cordage } from 'cordage/host'
import { DevReloader } from 'cordage/host'
import type { LogLevel } from 'cordage/host'
import { handlers, HttpError, sendJson, type ApiContext } from './api.ts'
import { statusOf } from './http-status.ts'
import { checkGivenToken, newToken, sameToken, tokenOf } from './auth.ts'
import { EvalReports, sendReport } from './eval-report.ts'
import { PluginFeed } from './feed.ts'
import { threadRoute } from './threads-api.ts'
import { traceHandlers } from './trace-api.ts'
import { artifactHandlers } from './artifacts-api.ts'

export const DefaultPort = 4780
const PublicDir = resolve(import.meta.dirname, 'public')
const MaxBody = 1 << 20

export interface PlaygroundOptions {
  /** The preset file whose agents the playground loads. */
  preset: string
  /** Serve only these agents of the preset (all are still checked). Default: every agent. */
  agents?: string[]
  /** Port on 127.0.0.1; 0 picks a free one. Default 4780. */
  port?: number
  /** Where errors of runs driven in the background and of plugins are reported. Default: stderr. */
  onError?: (error: unknown) => void
  /**
   * Hot reload, as `cordage dev` does it: watch the folders of the plugins the agents use and swap a
   * rebuilt plugin in at the next step boundary. `true` uses the default debounce (50 ms). Default: off.
   */
  watch?: boolean | { debounceMs?: number }
  /**
   * The secret every /api request must carry (at least 16 characters of letters, digits and `._~-`).
   * Default: 24 random bytes, base64url, new at each start. `cordage playground` passes `--token` or
   * $CORDAGE_PLAYGROUND_TOKEN here.
   */
  token?: string
  /** Serve the page and the read routes only: start, approve, reject, compare, swap and new threads or turns answer 403. Default: off. */
  readOnly?: boolean
  /** Which plugin log lines are shown, and where they go (CordageOptions.logLevel and .log; docs/guides/logging.md). */
  logLevel?: LogLevel
  log?: (line: string) => void
  /**
   * The working directory whose latest eval report the page links to: `cordage eval --report` leaves a
   * copy in .cordage/eval/latest.html there (cordage/eval latestReportPath). Default: process.cwd().
   */
  cwd?: string
}

export interface Playground {
  /** The address to open: `http://127.0.0.1:PORT/?token=TOKEN`. It carries the secret; print it only to whoever started the playground. */
  url: string
  /** `http://127.0.0.1:PORT`, without the token. */
  origin: string
  /** The secret every /api request must carry (`Authorization: Bearer TOKEN`). */
  token: string
  readOnly: boolean
  port: number
  app: Cordage
  feed: PluginFeed
  /** The hot reloader, when started with `watch`. */
  reloader?: DevReloader
  /** Stop serving (open streams are ended), then stop the app after its runs pause or end. */
  close(): Promise<void>
}

/**
 * Load the preset and serve the playground.
 * @throws CordageError from loading the preset; `invalid_input` for a bad port or one in use
 */
export async function startPlayground(options: PlaygroundOptions): Promise<Playground> {
  const port = options.port ?? DefaultPort
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CordageError('invalid_input', `the port must be a whole number from 0 to 65535, got ${port}`)
  const token = options.token === undefined ? newToken() : checkGivenToken(options.token)
  const readOnly = options.readOnly ?? false
  const onError = options.onError ?? ((error: unknown) => console.error('[playground]', error))
  const root = new Context()
  const feed = new PluginFeed()
  feed.attach(root)
  const app = await Cordage.fromPreset(options.preset, {
    root,
    onError,
    agents: options.agents,
    logLevel: options.logLevel,
    log: options.log,
  })
  let reloader: DevReloader | undefined
  if (options.watch) {
    const debounceMs = options.watch === true ? undefined : options.watch.debounceMs
    reloader = await DevReloader.start(app, { debounceMs }).catch(async (error) => {
      await app.stop()
      throw error
    })
  }
  const stopReloader = async () => {
    reloader?.stop()
    await reloader?.settled()
  }
  const evalReports = new EvalReports(resolve(options.cwd ?? process.cwd()))
  const api: ApiContext = { app, feed, reloader, onError, readOnly, evalReports }
  const server = createServer((req, res) => {
    void handle(api, token, req, res, server)
  })
  try {
    await listen(server, port)
  } catch (error) {
    await stopReloader()
    await app.stop()
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
    throw new CordageError(
      'invalid_input',
      inUse
        ? `port ${port} on 127.0.0.1 is in use; pass another with --port N (0 picks a free one)`
        : `cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`,
      { cause: error },
    )
  }
  const bound = (server.address() as { port: number }).port
  const origin = `http://127.0.0.1:${bound}`
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    readOnly,
    port: bound,
    app,
    feed,
    reloader,
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done())
        server.closeAllConnections()
      })
      // No reload starts once the watchers are closed; one under way finishes before the app stops.
      await stopReloader()
      await app.stop()
    },
  }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail)
      done()
    })
  })
}

async function handle(api: ApiContext, token: string, req: IncomingMessage, res: ServerResponse, server: Server): Promise<void> {
  try {
    const port = (server.address() as { port: number }).port
    const host = req.headers.host ?? ''
    // A page on another name that resolves to 127.0.0.1 (DNS rebinding) sends its own name as Host.
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      throw new HttpError(
        403,
        'invalid_input',
        `the playground answers requests for 127.0.0.1:${port} or localhost:${port} only, not ${JSON.stringify(host)}`,
      )
    }
    // A browser says where a cross-origin request (and any POST) comes from: only this origin may call.
    const origin = req.headers.origin
    if (origin !== undefined && origin !== `http://127.0.0.1:${port}` && origin !== `http://localhost:${port}`) {
      throw new HttpError(
        403,
        'invalid_input',
        `the playground answers its own page only (http://127.0.0.1:${port}), not a request from ${JSON.stringify(origin.slice(0, 200))}`,
      )
    }
    const url = new URL(req.url ?? '/', `http://${host}`)
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      // Every API route, reads too: events hold task text, tool outputs and approvals. EventSource
      // cannot set headers, so the stream routes also take ?token=. The eval report, opened as a
      // link, takes a ticket instead (playground/eval-report.ts): the token stays out of addresses.
      const get = (req.method ?? 'GET') === 'GET'
      const stream = get && /\/stream\/*$/.test(url.pathname)
      const ticketed =
        get &&
        req.headers.authorization === undefined &&
        /^\/api\/eval\/latest\/*$/.test(url.pathname) &&
        api.evalReports.admits(url.searchParams.get('ticket'))
      if (!ticketed && !sameToken(tokenOf(req, url, stream), token)) {
        res.setHeader('www-authenticate', 'Bearer realm="cordage-playground"')
        throw new HttpError(
          401,
          'unauthorized',
          `this API needs the token the playground printed when it started: open the URL it printed (http://127.0.0.1:${port}/?token=…), or send the header Authorization: Bearer TOKEN`,
        )
      }
      await route(api, req, res, url)
    } else await serveStatic(req, res, url)
  } catch (error) {
    if (res.headersSent) {
      res.end()
      return
    }
    if (error instanceof HttpError) {
      sendJson(res, error.status, { error: { code: error.code, message: error.message, issues: error.issues } })
    } else if (CordageError.is(error)) {
      sendJson(res, statusOf(error), { error: { code: error.code, message: error.message } })
    } else {
      api.onError(error)
      sendJson(res, 500, { error: { code: 'internal_error', message: (error as Error)?.message ?? String(error) } })
    }
  }
}

async function route(api: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  // Trailing slashes cut by hand: /\/+$/ backtracks quadratically on a path of many slashes.
  let end = url.pathname.length
  while (end > 0 && url.pathname.charCodeAt(end - 1) === 47) end--
  const path = url.pathname.slice(0, end)
  const method = req.method ?? 'GET'
  const parts = path.split('/').slice(2).map(decoded)
  const only = (allowed: string) => {
    if (method !== allowed) throw new HttpError(405, 'invalid_input', `${method} ${path} is not supported; use ${allowed}`)
    if (allowed === 'POST' && api.readOnly)
      throw new HttpError(
        403,
        'invalid_input',
        `this playground is read-only (started with --read-only): ${method} ${path} changes something, so it is refused`,
      )
  }
  const [first, id, action, extra] = parts
  if (first === 'agents' && !id) {
    only('GET')
    return handlers.agents(api, res)
  }
  if (first === 'agents' && id && action === 'swap' && !extra) {
    only('POST')
    return handlers.swap(api, res, id, await body(req))
  }
  if (first === 'runs' && !id) {
    if (method === 'POST') {
      only('POST')
      return handlers.start(api, res, await body(req))
    }
    only('GET')
    return handlers.runs(api, res, url)
  }
  if (first === 'runs' && id && action === 'trace' && !extra) {
    only('GET')
    return traceHandlers.trace(api, res, id, url)
  }
  if (first === 'runs' && id && action === 'steps' && extra && parts.length <= 5 && (parts[4] === undefined || parts[4] === 'context')) {
    only('GET')
    return parts[4] === 'context' ? traceHandlers.context(api, res, id, extra) : traceHandlers.step(api, res, id, extra)
  }
  if (first === 'runs' && id && !extra) {
    if (!action) {
      only('GET')
      return handlers.run(api, res, id)
    }
    if (action === 'events') {
      only('GET')
      return handlers.events(api, res, url, id, req)
    }
    if (action === 'artifacts') {
      only('GET')
      return artifactHandlers.list(api, res, id)
    }
    if (action === 'stream') {
      only('GET')
      return handlers.stream(api, res, url, id, req)
    }
    if (action === 'approve' || action === 'reject') {
      only('POST')
      return handlers.decide(api, res, id, action === 'approve', await body(req))
    }
  }
  if (first === 'threads' && (await threadRoute(api, res, url, parts.slice(1), method, only, () => body(req)))) return
  if (first === 'artifacts' && id && !action) {
    only('GET')
    return artifactHandlers.read(api, res, id, url)
  }
  if (first === 'compare' && !id) {
    only('POST')
    return handlers.compare(api, res, await body(req))
  }
  if (first === 'eval' && !id) {
    only('GET')
    return sendJson(res, 200, await api.evalReports.info())
  }
  if (first === 'eval' && id === 'latest' && !action) {
    only('GET')
    const content = await api.evalReports.read()
    if (!content) throw new HttpError(404, 'invalid_input', api.evalReports.missing())
    return sendReport(res, content)
  }
  if (first === 'plugin-events' && !id) {
    only('GET')
    return handlers.pluginEvents(api, res, url, req)
  }
  if (first === 'plugin-events' && id === 'stream' && !action) {
    only('GET')
    return handlers.pluginStream(api, res, url, req)
  }
  throw new HttpError(404, 'invalid_input', `no API route ${method} ${path}; see docs/guides/playground.md`)
}

/** A JSON request body (at most 1 MiB). */
async function body(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? ''
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(
      415,
      'invalid_input',
      `send the body as JSON (content-type: application/json), not ${JSON.stringify(type || 'nothing')}`,
    )
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MaxBody) throw new HttpError(413, 'invalid_input', `the request body is larger than ${MaxBody} bytes`)
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (!text.trim()) return {}
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new HttpError(400, 'invalid_input', `the request body is not JSON: ${(error as Error).message}`)
  }
}

const Types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
}

async function serveStatic(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new HttpError(405, 'invalid_input', `${req.method} is not supported for pages; use GET`)
  const path = url.pathname === '/' ? '/index.html' : decoded(url.pathname)
  const file = normalize(join(PublicDir, path))
  if (!file.startsWith(PublicDir + '/') || !Types[extname(file)]) throw new HttpError(404, 'invalid_input', `no page ${url.pathname}`)
  let content: Buffer
  try {
    content = await readFile(file)
  } catch {
    throw new HttpError(404, 'invalid_input', `no page ${url.pathname}`)
  }
  res.writeHead(200, {
    'content-type': Types[extname(file)],
    'cache-control': 'no-cache',
    'content-length': content.length,
    'x-content-type-options': 'nosniff',
    // The page loads only its own files and talks only to this server; no other site may frame it (no
    // clickjacking of Approve); the first address carries the token, so it is never sent as a referrer.
    'content-security-policy':
      "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  })
  res.end(req.method === 'HEAD' ? undefined : content)
}

/** A URL part, decoded; a malformed escape is the client's mistake (400), not ours. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new HttpError(400, 'invalid_input', `the URL has a malformed %-escape: ${JSON.stringify(part.slice(0, 80))}`)
  }
}
