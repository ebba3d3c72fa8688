/**
 * core/kit/grants.ts: an approval that reaches beyond one call covers exactly the agent, tool, arguments,
 * policy version and tool version it was given for, until it expires or is revoked.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashArgs } from '../../core/kit/hash.ts'
import { grantMismatch, isActive, matchesQuery, newGrant, type ApprovalGrant } from '../../core/kit/grants.ts'

const args = { orderId: 'O-1', amount: 40 }
const grant = (over: Partial<ApprovalGrant> = {}): ApprovalGrant => ({
  id: 'g1',
  scope: 'run',
  agent: 'desk',
  tool: 'refund',
  args: 'any',
  policyVersion: 'p@1',
  by: 'alice',
  createdAt: 0,
  source: { runId: 'r1', actionId: 's1.a1' },
  ...over,
})
const call = (over: Partial<Parameters<typeof grantMismatch>[1]> = {}) => ({
  agent: 'desk',
  tool: 'refund',
  args,
  argsHash: hashArgs(args),
  policyVersion: 'p@1',
  ...over,
})

describe('grantMismatch', () => {
  it('covers a call of the same agent, tool and policy version', () => {
    assert.equal(grantMismatch(grant(), call(), 10), undefined)
  })

  it('does not cover another tool of the same agent: a run-scoped approval for one tool is not one for another', () => {
    assert.equal(grantMismatch(grant({ tool: 'refund' }), call({ tool: 'delete_order' }), 10), 'another agent or tool')
  })

  it('does not cover the same tool of another agent', () => {
    assert.equal(grantMismatch(grant({ agent: 'desk' }), call({ agent: 'ops' }), 10), 'another agent or tool')
  })

  it('stops covering once revoked, and from the instant it expires', () => {
    assert.equal(grantMismatch(grant({ revokedAt: 5 }), call(), 1), 'revoked')
    assert.equal(grantMismatch(grant({ revokedAt: 0 }), call(), 1), 'revoked', 'revoked at time 0 is revoked')
    assert.equal(grantMismatch(grant({ expiresAt: 100 }), call(), 99), undefined)
    assert.equal(grantMismatch(grant({ expiresAt: 100 }), call(), 100), 'expired')
    assert.equal(grantMismatch(grant({ expiresAt: 100 }), call(), 101), 'expired')
    assert.equal(grantMismatch(grant({ expiresAt: 0 }), call(), 0), 'expired')
  })

  it('holds only where its giver may approve the call: the decision that asked names its approvers', () => {
    assert.equal(grantMismatch(grant({ by: 'alice' }), call({ approvers: ['alice', 'bob'] }), 10), undefined)
    assert.equal(grantMismatch(grant({ by: 'alice' }), call({ approvers: ['*'] }), 10), undefined)
    assert.equal(grantMismatch(grant({ by: 'alice' }), call({ approvers: undefined }), 10), undefined, 'no approvers named: anyone')
    assert.equal(
      grantMismatch(grant({ by: 'bob' }), call({ approvers: ['alice', 'carol'] }), 10),
      'given by bob, whom the decision does not name (alice, carol)',
    )
    assert.equal(grantMismatch(grant({ by: 'bob' }), call({ approvers: [] }), 10), 'given by bob, whom the decision does not name ()')
  })

  it('is void under another policy version', () => {
    assert.equal(grantMismatch(grant({ policyVersion: 'p@1' }), call({ policyVersion: 'p@2' }), 10), 'given under policy p@1, now p@2')
  })

  it('is void under another tool version, when both are known', () => {
    assert.equal(
      grantMismatch(grant({ toolVersion: 'crm@1.0.0' }), call({ toolVersion: 'crm@2.0.0' }), 10),
      'given for crm@1.0.0, now crm@2.0.0',
    )
    assert.equal(grantMismatch(grant({ toolVersion: 'crm@1.0.0' }), call({ toolVersion: 'crm@1.0.0' }), 10), undefined)
    assert.equal(grantMismatch(grant({ toolVersion: 'crm@1.0.0' }), call(), 10), undefined)
    assert.equal(grantMismatch(grant(), call({ toolVersion: 'crm@2.0.0' }), 10), undefined)
  })

  it('covers exactly the arguments of its hash', () => {
    const byHash = grant({ args: { hash: hashArgs(args) } })
    assert.equal(grantMismatch(byHash, call(), 10), undefined)
    const other = { orderId: 'O-2', amount: 40 }
    assert.equal(grantMismatch(byHash, call({ args: other, argsHash: hashArgs(other) }), 10), 'other arguments')
  })

  it('covers the arguments its pattern matches, and no others', () => {
    const byPattern = grant({ args: { pattern: { amount: { lte: 50 } } } })
    assert.equal(grantMismatch(byPattern, call(), 10), undefined)
    const big = { orderId: 'O-1', amount: 500 }
    assert.equal(grantMismatch(byPattern, call({ args: big, argsHash: hashArgs(big) }), 10), 'arguments outside its pattern')
  })

  it('covers nothing when its pattern no longer compiles or its arguments are in no known form', () => {
    assert.match(
      grantMismatch(grant({ args: { pattern: { amount: { lesser: 50 } } } as never }), call(), 10) ?? '',
      /^its argument pattern is not valid: argument test "amount": unknown operator "lesser"/,
    )
    assert.equal(grantMismatch(grant({ args: 'all' as never }), call(), 10), 'its arguments are not recorded in a known form')
    assert.equal(grantMismatch(grant({ args: null as never }), call(), 10), 'its arguments are not recorded in a known form')
    assert.equal(grantMismatch(grant({ args: { any: true } as never }), call(), 10), 'its arguments are not recorded in a known form')
  })
})

describe('isActive and matchesQuery', () => {
  it('is active until revoked or expired', () => {
    assert.equal(isActive(grant(), 1e12), true)
    assert.equal(isActive(grant({ expiresAt: 100 }), 99), true)
    assert.equal(isActive(grant({ expiresAt: 100 }), 100), false)
    assert.equal(isActive(grant({ revokedAt: 0 }), 1), false)
  })

  it('answers a query by agent and tool, active grants only unless asked', () => {
    const g = grant({ expiresAt: 100 })
    assert.equal(matchesQuery(g, { now: 50 }), true)
    assert.equal(matchesQuery(g, { agent: 'desk', tool: 'refund', now: 50 }), true)
    assert.equal(matchesQuery(g, { agent: 'ops', now: 50 }), false)
    assert.equal(matchesQuery(g, { tool: 'delete_order', now: 50 }), false)
    assert.equal(matchesQuery(g, { now: 100 }), false)
    assert.equal(matchesQuery(g, { now: 100, inactive: true }), true)
    assert.equal(matchesQuery(g, { agent: 'ops', now: 100, inactive: true }), false)
  })

  it('uses the clock when the query gives no time', () => {
    assert.equal(matchesQuery(grant({ expiresAt: Date.now() + 60_000 }), {}), true)
    assert.equal(matchesQuery(grant({ expiresAt: Date.now() - 1 }), {}), false)
  })
})

describe('newGrant', () => {
  const action = {
    id: 's1.a1',
    tool: 'refund',
    argsHash: hashArgs(args),
    decision: { verdict: 'ask' as const, ruleId: 'r', reason: '', policyVersion: 'p@1', toolVersion: 'crm@1.0.0', seq: 3 },
  }

  it('binds the grant to the tool, the policy and tool version the decision was made under, and the approval it came from', () => {
    const g = newGrant('desk', 'run_1', action, 'grant', 'alice', { reason: 'routine' })
    assert.match(g.id, /^gr_[0-9a-z]+_[0-9a-f]{8}$/)
    assert.deepEqual(
      [g.scope, g.agent, g.tool, g.policyVersion, g.toolVersion, g.by, g.reason, g.expiresAt, g.source],
      ['grant', 'desk', 'refund', 'p@1', 'crm@1.0.0', 'alice', 'routine', undefined, { runId: 'run_1', actionId: 's1.a1' }],
    )
    assert.notEqual(newGrant('desk', 'run_1', action, 'grant', 'alice', {}).id, g.id)
  })

  it('covers, unless told otherwise: any arguments for the run, exactly these for a standing grant', () => {
    assert.equal(newGrant('desk', 'r', action, 'run', 'alice', {}).args, 'any')
    assert.deepEqual(newGrant('desk', 'r', action, 'grant', 'alice', {}).args, { hash: hashArgs(args) })
    assert.equal(newGrant('desk', 'r', action, 'grant', 'alice', { args: 'any' }).args, 'any')
    assert.deepEqual(newGrant('desk', 'r', action, 'run', 'alice', { args: { amount: { lte: 50 } } }).args, {
      pattern: { amount: { lte: 50 } },
    })
  })

  it('lapses the time it is given after it is made', () => {
    const before = Date.now()
    const g = newGrant('desk', 'r', action, 'run', 'alice', { expiresInMs: 1000 })
    assert.ok(g.expiresAt! >= before + 1000 && g.expiresAt! === g.createdAt + 1000)
  })

  it('refuses what would cover more than the approver said: an empty pattern, an unknown test, no positive lifetime, no decision', () => {
    const refuses = (options: Parameters<typeof newGrant>[5], message: RegExp, a: Parameters<typeof newGrant>[2] = action) =>
      assert.throws(() => newGrant('desk', 'r', a, 'grant', 'alice', options), { code: 'invalid_input', message })
    refuses({ args: {} }, /pattern is empty, which would cover any arguments; say so with --any-args/)
    refuses({ args: { amount: { lesser: 5 } } as never }, /the approval's argument pattern: .*lesser/)
    refuses({ expiresInMs: 0 }, /expiresInMs must be a positive number of milliseconds, got 0/)
    refuses({ expiresInMs: -5 }, /got -5/)
    refuses({ expiresInMs: Number.NaN }, /got NaN/)
    refuses({}, /action s1\.a1 has no decision on record/, { ...action, decision: undefined })
  })
})
