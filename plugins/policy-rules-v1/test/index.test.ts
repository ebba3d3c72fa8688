import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashArgs, type PolicyRequest, type Tool } from 'cordage'
import { plug } from '../../../test/plug.ts'
import plugin from '../index.ts'
import { RulePolicy } from '../rules.ts'
import manifest, { type Config } from '../manifest.ts'

const tool = (name: string, sideEffect: Tool['sideEffect'] = 'none', needsApproval = false) => ({ name, sideEffect, needsApproval }) as Tool
const request = (t: Tool, args: unknown = {}): PolicyRequest => ({
  runId: 'r',
  agent: 'a',
  actionId: 's1.a1',
  tool: t,
  args,
  argsHash: hashArgs(args),
  state: {} as never,
})
const policy = (config: Partial<Config>) => new RulePolicy(manifest.config(config) as Config, '1.0.0')

describe('policy-rules', () => {
  it('decides by the first matching rule, recording its id and reason', () => {
    const p = policy({
      rules: [
        { id: 'reads', verdict: 'allow', match: { sideEffect: 'none' }, reason: 'reading is harmless' },
        { id: 'all', verdict: 'deny', match: {} },
      ],
    })
    assert.deepEqual(p.decide(request(tool('lookup'))), { verdict: 'allow', ruleId: 'reads', reason: 'reading is harmless' })
    assert.deepEqual(p.decide(request(tool('write', 'external'))), { verdict: 'deny', ruleId: 'all', reason: 'matched rule all' })
  })

  it('falls back to the default verdict (deny unless configured) with rule id "default"', () => {
    assert.deepEqual(policy({}).decide(request(tool('x'))), {
      verdict: 'deny',
      ruleId: 'default',
      reason: 'no rule matched x; the default is deny',
    })
    assert.equal(policy({ default: 'ask' }).decide(request(tool('x'))).verdict, 'ask')
  })

  it('matches tool name globs, side-effect lists and the needsApproval flag', () => {
    const p = policy({
      rules: [
        { id: 'crm', verdict: 'ask', match: { tool: 'crm_*', sideEffect: ['local', 'external'] } },
        { id: 'flagged', verdict: 'ask', match: { needsApproval: true } },
      ],
    })
    assert.equal(p.decide(request(tool('crm_update', 'external'))).ruleId, 'crm')
    assert.equal(p.decide(request(tool('crm_read', 'none'))).ruleId, 'default')
    assert.equal(p.decide(request(tool('mail', 'none', true))).ruleId, 'flagged')
  })

  it('matches arguments by glob, regex, comparison, membership, equality and presence, with dotted paths', () => {
    const p = policy({
      rules: [
        { id: 'big-refund', verdict: 'deny', match: { args: { amount: { gt: 100 } } } },
        { id: 'eu', verdict: 'ask', match: { args: { 'customer.region': { in: ['eu', 'uk'] } } } },
        { id: 'tmp', verdict: 'allow', match: { args: { path: '/tmp/*' } } },
        { id: 'ticket', verdict: 'allow', match: { args: { ticket: { regex: '^T-\\d+$' }, note: { exists: true } } } },
        { id: 'exact', verdict: 'allow', match: { args: { mode: { equals: { a: 1, b: 2 } } } } },
      ],
    })
    const d = (args: unknown) => p.decide(request(tool('t'), args)).ruleId
    assert.equal(d({ amount: 101 }), 'big-refund')
    assert.equal(d({ amount: 100 }), 'default')
    assert.equal(d({ amount: '500' }), 'default', 'a string is not a number')
    assert.equal(d({ customer: { region: 'uk' } }), 'eu')
    assert.equal(d({ path: '/tmp/x/y' }), 'tmp')
    assert.equal(d({ path: '/etc/passwd' }), 'default')
    assert.equal(d({ ticket: 'T-12', note: 'n' }), 'ticket')
    assert.equal(d({ ticket: 'T-12' }), 'default')
    assert.equal(d({ mode: { b: 2, a: 1 } }), 'exact', 'equality ignores key order')
  })

  it('changes its version when the rules change, so old approvals and tickets lapse', () => {
    const a = policy({ rules: [{ id: 'r', verdict: 'allow', match: {} }] })
    const b = policy({ rules: [{ id: 'r', verdict: 'deny', match: {} }] })
    assert.match(a.version, /^policy-rules@1\.0\.0\+[0-9a-f]{8}$/)
    assert.notEqual(a.version, b.version)
    assert.equal(a.version, policy({ rules: [{ id: 'r', verdict: 'allow', match: {} }] }).version)
  })

  it('refuses to start with a duplicate rule id or a broken regex', async () => {
    const dup = await plug(plugin, {
      rules: [
        { id: 'x', verdict: 'allow' },
        { id: 'x', verdict: 'deny' },
      ],
    })
    assert.match(String(dup.fork.error?.message), /rule id "x" is used twice/)
    // A bad argument test is refused by the config check, before the plugin starts.
    assert.throws(
      () => plugin.manifest.config!({ rules: [{ id: 'x', verdict: 'allow', match: { args: { a: { regex: '(' } } } }] }),
      /rules\[0\]\.match\.args argument test "a": regex: \/\(\/ is not a valid regular expression/,
    )
  })
})
