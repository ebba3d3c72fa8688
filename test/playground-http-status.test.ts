/**
 * Every error code has an HTTP status somebody chose (playground/http-status.ts): a code added to
 * core/contracts/errors.ts without one fails here (and the typecheck), instead of falling back to a
 * default. Codes a request can cause never answer 5xx; who-may-do-what codes answer 401 or 403, and
 * conflicts with the store 409. The statuses themselves are checked through the real server in
 * test/playground-threads-api.test.ts, test/playground-api.test.ts and test/security/playground-auth.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Code, Codes, CordageError } from 'cordage'
import { HttpStatus, statusOf } from '../playground/http-status.ts'

const codes = Object.keys(Codes) as Code[]

describe('playground HTTP statuses', () => {
  it('has a status of its own for every error code, and none for a code that does not exist', () => {
    const missing = codes.filter((c) => !Object.hasOwn(HttpStatus, c))
    assert.deepEqual(missing, [], 'add a line to playground/http-status.ts for each of these codes')
    const unknown = Object.keys(HttpStatus).filter((c) => !Object.hasOwn(Codes, c))
    assert.deepEqual(unknown, [], 'these codes are not in core/contracts/errors.ts')
    for (const code of codes) {
      const status = statusOf(new CordageError(code))
      assert.equal(status, HttpStatus[code], code)
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`)
    }
  })

  it('answers 401 or 403 for authorization, 409 for conflicts and drift, 4xx for usage and thread refusals', () => {
    for (const code of codes) {
      const { kind } = Codes[code]
      const status = HttpStatus[code]
      if (kind === 'authorization') assert.ok(status === 401 || status === 403, `${code} (${kind}): ${status}`)
      if (kind === 'conflict' || kind === 'environment_drift') assert.equal(status, 409, `${code} (${kind})`)
      if (kind === 'usage' || code.startsWith('thread_')) assert.ok(status >= 400 && status < 500, `${code} (${kind}): ${status}`)
    }
  })
})
