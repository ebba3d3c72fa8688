/**
 * @module playground/auth
 * The playground's secret token: made at start (or given), printed in the URL the playground opens on,
 * and required on every /api request. Another process of this machine (another user's, say) can reach
 * 127.0.0.1 but does not know the token, so it can neither read the runs (task text, tool outputs,
 * approvals) nor start, approve, reject, replay or swap anything.
 *
 * The page sends it as `Authorization: Bearer TOKEN`. EventSource cannot set headers, so the two
 * Server-Sent Events routes also take it as `?token=TOKEN`. There is no cookie on purpose: a cookie for
 * 127.0.0.1 is sent to every port of 127.0.0.1 (cookies do not separate ports), so any other server on
 * loopback that the browser visits would receive it, and it would be an ambient credential another
 * local page could ride on. The page keeps the token in its own origin's localStorage instead.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { CordageError } from 'cordage'

/** The environment variable `cordage playground` takes the token from when `--token` is not given. */
export const TokenEnv = 'CORDAGE_PLAYGROUND_TOKEN'

/** A token given by hand must be this long at least: guessable tokens protect nothing. */
export const MinTokenLength = 16

/** 24 random bytes, base64url: 32 characters, 192 bits. */
export function newToken(): string {
  return randomBytes(24).toString('base64url')
}

/**
 * Check a token given by hand (option, `--token`, or $CORDAGE_PLAYGROUND_TOKEN): long enough to be
 * unguessable, and made of characters that go into a URL and a header unchanged.
 * @throws CordageError `invalid_input` naming what is wrong (never the token itself)
 */
export function checkGivenToken(token: string): string {
  if (token.length < MinTokenLength)
    throw new CordageError(
      'invalid_input',
      `the playground token must be at least ${MinTokenLength} characters (it has ${token.length}); leave it out and one is made for you`,
    )
  if (!/^[A-Za-z0-9._~-]+$/.test(token))
    throw new CordageError(
      'invalid_input',
      'the playground token may contain only letters, digits and . _ ~ - (it goes into a URL and a header unchanged)',
    )
  return token
}

/**
 * The token a request carries: the `Authorization: Bearer` header, or (where `query` is allowed: the
 * Server-Sent Events routes) `?token=`. Undefined when there is none.
 */
export function tokenOf(req: IncomingMessage, url: URL, query: boolean): string | undefined {
  const header = req.headers.authorization
  if (header !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(header)
    return match?.[1] ?? ''
  }
  return query ? (url.searchParams.get('token') ?? undefined) : undefined
}

/**
 * Whether `given` is the token, in time that does not depend on where they differ or on their lengths:
 * both are hashed to 32 bytes first, and the digests compared with timingSafeEqual.
 */
export function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(token))
}
