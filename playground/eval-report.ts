/**
 * @module playground/eval-report
 * The playground's link to the latest `cordage eval` report: the copy `cordage eval --report FILE`
 * leaves in .cordage/eval/latest.html of the directory it ran in (cordage/eval latestReportPath).
 *
 * `GET /api/eval` (with the token) says whether there is one, and gives the page a link to it:
 * `/api/eval/latest?ticket=T`. The report holds case text and a model's answers, so it is not public;
 * but the page opens it by navigation, which cannot send the token's header, and the token must not go
 * into an address (it would stay in the browser's history, and it also approves and swaps). So the
 * link carries a ticket instead: random, good for reading this one route only, for 10 minutes. The
 * report is served sandboxed under its own strict policy: it runs no script, loads nothing, and as a
 * sandboxed document it cannot reach this origin's storage (where the page keeps the token).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { latestReportPath } from 'cordage/eval'

/** The report's own policy (core/eval/report.ts), plus what only a header can say: sandboxed, never framed. */
export const ReportPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"

/** How long a ticket opens the report. */
export const TicketMs = 10 * 60_000

interface Ticket {
  value: string
  digest: Buffer
  until: number
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/** The latest report of one working directory, and the tickets that open it. */
export class EvalReports {
  /** The ticket handed out now, and the one before it (a link given just before a new one still opens). */
  private current?: Ticket
  private previous?: Ticket

  constructor(
    readonly cwd: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A ticket good for at least half of TicketMs: the same one until then, so links stay few. */
  ticket(): string {
    const now = this.now()
    if (!this.current || this.current.until - now < TicketMs / 2) {
      this.previous = this.current
      const value = randomBytes(18).toString('base64url')
      this.current = { value, digest: digest(value), until: now + TicketMs }
    }
    return this.current.value
  }

  /** Whether `given` is a ticket handed out and not expired (compared in constant time, as the token is). */
  admits(given: string | null): boolean {
    if (!given) return false
    const now = this.now()
    const mine = digest(given)
    return [this.current, this.previous].some((t) => t !== undefined && t.until > now && timingSafeEqual(t.digest, mine))
  }

  /** The report's file, when there is one: a regular file (a folder or a dangling link is none). */
  async latest(): Promise<{ file: string; bytes: number; modifiedAt: number } | undefined> {
    const file = latestReportPath(this.cwd)
    const info = await stat(file).catch(() => undefined)
    return info?.isFile() ? { file, bytes: info.size, modifiedAt: info.mtimeMs } : undefined
  }

  /** What `GET /api/eval` answers: `{ latest: { bytes, modifiedAt, href } }`, or `{ latest: null }` when there is none. */
  async info(): Promise<{ latest: { bytes: number; modifiedAt: number; href: string } | null }> {
    const found = await this.latest()
    return { latest: found ? { bytes: found.bytes, modifiedAt: found.modifiedAt, href: `/api/eval/latest?ticket=${this.ticket()}` } : null }
  }

  /** The report's bytes, or undefined when there is none (or it went away while being read). */
  async read(): Promise<Buffer | undefined> {
    const found = await this.latest()
    return found && (await readFile(found.file).catch(() => undefined))
  }

  /** Why there is nothing to serve, and how to make it. */
  missing(): string {
    return `no eval report yet: run \`cordage eval SUITE --report FILE\` in ${this.cwd} (it keeps a copy of the last report in ${latestReportPath(this.cwd)})`
  }
}

/** `GET /api/eval/latest`: the report, sandboxed under its own policy, never cached, never framed. */
export function sendReport(res: ServerResponse, content: Buffer): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': content.length,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-security-policy': ReportPolicy,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  })
  res.end(content)
}
