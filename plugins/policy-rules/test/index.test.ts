import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { hashArgs, type PolicyRequest, type Tool } from 'cordage'
import { plug } from '../../../test/plug.ts'
import plugin from '../index.ts'
import { RulePolicy } from '../rules.ts'
import manifest, { type Config } from '../manifest.ts'

const tool = (name: string, sideEffect: Tool['sideEffect'] = 'none', needsApproval = false) => ({ name, sideEffect, needsApproval }) as Tool
const request = (t: Tool, args: unknown = {}, agent = 'support'): PolicyRequest => ({
  runId: 'r',
  agent,
  actionId: 's1.a1',
  tool: t,
  args,
  argsHash: hashArgs(args),
  state: {} as never,
})
const policy = (config: Record<string, unknown>) => new RulePolicy(manifest.config(config) as Config, '2.0.0')

describe('policy-rules 2', () => {
  it('orders by priority, then deny over ask over allow, then file order', () => {
    const p = policy({
      approvers: ['*'],
      rules: [
        { id: 'reads', verdict: 'allow', match: { sideEffect: 'none' } },
        { id: 'secret-reads', verdict: 'deny', match: { tool: 'read_secret' } },
        { id: 'break-glass', verdict: 'allow', priority: 10, match: { tool: 'read_secret', agent: 'oncall' } },
        { id: 'ask-reads', verdict: 'ask', match: { sideEffect: 'none' } },
      ],
    })
    // deny beats the allow and the ask declared around it at the same priority
    assert.equal(p.decide(request(tool('read_secret'))).ruleId, 'secret-reads')
    // a higher priority wins whatever its verdict
    assert.equal(p.decide(request(tool('read_secret'), {}, 'oncall')).ruleId, 'break-glass')
    // ask beats allow at equal priority, even declared after it
    assert.deepEqual(p.decide(request(tool('lookup'))), {
      verdict: 'ask',
      ruleId: 'ask-reads',
      reason: 'matched rule ask-reads',
      approvers: ['*'],
    })
  })

  it('matches namespaces, agents and the environment', () => {
    const p = policy({
      environment: 'prod',
      rules: [
        { id: 'prod-github', verdict: 'deny', match: { namespace: 'github', environment: 'prod' } },
        { id: 'staging-only', verdict: 'allow', match: { environment: ['staging'] } },
        { id: 'triage', verdict: 'allow', match: { agent: 'triage-*' } },
      ],
    })
    assert.equal(p.decide(request(tool('github__create_issue'))).ruleId, 'prod-github')
    assert.equal(p.decide(request(tool('jira__create_issue'), {}, 'triage-bot')).ruleId, 'triage')
    assert.equal(p.decide(request(tool('create_issue'))).ruleId, 'default')
  })

  it('fails closed: an ask with no approver configured is a deny that says why', () => {
    const p = policy({ rules: [{ id: 'writes', verdict: 'ask', match: { sideEffect: 'external' }, reason: 'writes need a person' }] })
    const decision = p.decide(request(tool('pay', 'external')))
    assert.equal(decision.verdict, 'deny')
    assert.equal(decision.ruleId, 'writes')
    assert.match(
      decision.reason,
      /writes need a person; it asks for approval and no approver is configured \(set approvers\), so it is denied to fail closed/,
    )
  })

  it("names the approvers of an ask: the rule's own, else the top-level ones", () => {
    const p = policy({
      approvers: ['alice', 'bob'],
      rules: [
        { id: 'refunds', verdict: 'ask', match: { tool: 'refund' }, approvers: ['finance-lead'] },
        { id: 'writes', verdict: 'ask', match: { sideEffect: 'external' } },
      ],
    })
    assert.deepEqual(p.decide(request(tool('refund', 'external'))).approvers, ['finance-lead'])
    assert.deepEqual(p.decide(request(tool('email', 'external'))).approvers, ['alice', 'bob'])
  })

  it('changes its version when rules, approvers or the environment change', () => {
    const base = { rules: [{ id: 'a', verdict: 'allow', match: {} }], approvers: ['alice'] }
    const versions = new Set([
      policy(base).version,
      policy({ ...base, approvers: ['bob'] }).version,
      policy({ ...base, environment: 'prod' }).version,
      policy({ ...base, default: 'ask' }).version,
    ])
    assert.equal(versions.size, 4)
    assert.match(policy(base).version, /^policy-rules@2\.0\.0\+[0-9a-f]{8}$/)
  })

  it('refuses at start: a duplicate id, a bad regex, approvers on a rule that does not ask', async () => {
    for (const [rules, message] of [
      [
        [
          { id: 'x', verdict: 'allow', match: {} },
          { id: 'x', verdict: 'deny', match: {} },
        ],
        /rule id "x" is used twice/,
      ],
      [
        [{ id: 'x', verdict: 'allow', match: { args: { path: { regex: '(' } } } }],
        /rules\[0\]\.match\.args argument test "path": regex: \/\(\/ is not a valid regular expression/,
      ],
      [[{ id: 'x', verdict: 'allow', match: {}, approvers: ['alice'] }], /rule "x" names approvers but its verdict is allow/],
    ] as const) {
      // A bad argument test is refused by the config check already, the others when the plugin starts.
      const refused = await plug(plugin, { rules }).then(
        ({ fork }) => String(fork.error?.message),
        (error: Error) => error.message,
      )
      assert.match(refused, message)
    }
  })

  it('runs the README example as written', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)![1]
    const entry = parse(yaml).plugins[0]
    assert.equal(entry.version, '^2.0.0')
    const p = policy({ ...entry.config, environment: 'production' })
    assert.equal(p.decide(request(tool('email', 'external'))).ruleId, 'no-prod-writes')
    const staging = policy({ ...entry.config, environment: 'staging' })
    assert.deepEqual(staging.decide(request(tool('issue_refund', 'external'), { amount: 250 })).approvers, ['manager'])
    assert.deepEqual(staging.decide(request(tool('email', 'external'))).approvers, ['alice', 'bob'])
    assert.equal(staging.decide(request(tool('lookup'))).verdict, 'allow')
  })
})

describe('policy-rules: 1.x and 2.x behind the same contract', () => {
  it('decides the support desk the same way under either line, with nothing else changed', async () => {
    const { supportDesk, DefaultRules, refundAnswer } = await import('../../../test/helpers.ts')
    const script = [
      { tool: 'lookup_policy', args: { topic: 'refunds' } },
      { tool: 'record_followup', args: { ticketId: 'T-1', note: 'n' } },
      { final: refundAnswer },
    ]
    const outcomes = []
    for (const policyPlugin of [
      { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'deny', rules: DefaultRules } },
      { plugin: 'policy-rules', version: '^2.0.0', config: { default: 'deny', approvers: ['*'], rules: DefaultRules } },
    ]) {
      const desk = await supportDesk({ script, policyPlugin })
      try {
        const paused = await desk.agent.run('refund window?')
        const done = await (await desk.agent.approve(paused.runId, 's2.a1', { by: 'alice' })).done
        const decisions = (await desk.events(done.runId))
          .filter((e) => e.type === 'tool/decision')
          .map((e) => e.type === 'tool/decision' && [e.data.verdict, e.data.ruleId, e.producer])
        outcomes.push({ paused: paused.status, done: done.status, decisions })
      } finally {
        await desk.stop()
      }
    }
    assert.deepEqual(
      outcomes.map((o) => [o.paused, o.done]),
      [
        ['WAITING_APPROVAL', 'COMPLETED'],
        ['WAITING_APPROVAL', 'COMPLETED'],
      ],
    )
    assert.deepEqual(outcomes[0].decisions, [
      ['allow', 'read-only', 'policy-rules@1.0.0'],
      ['ask', 'followups-need-approval', 'policy-rules@1.0.0'],
    ])
    assert.deepEqual(outcomes[1].decisions, [
      ['allow', 'read-only', 'policy-rules@2.1.0'],
      ['ask', 'followups-need-approval', 'policy-rules@2.1.0'],
    ])
  })
})

describe('policy-rules 2.1: dry runs', () => {
  const dry = (t: Tool, args: unknown = {}): PolicyRequest => ({ ...request(t, args), dryRun: true })
  it('matches dryRun: true on dry runs only, and dryRun: false on real calls only', () => {
    const p = policy({
      approvers: ['*'],
      rules: [
        { id: 'refunds', verdict: 'ask', match: { tool: 'issue_refund' } },
        { id: 'previews', verdict: 'allow', priority: 5, match: { dryRun: true } },
        { id: 'real-only', verdict: 'deny', priority: 1, match: { tool: 'wipe', dryRun: false } },
      ],
    })
    assert.equal(p.decide(dry(tool('issue_refund', 'none'))).ruleId, 'previews')
    assert.equal(p.decide(request(tool('issue_refund', 'external'))).ruleId, 'refunds')
    assert.equal(p.decide(request(tool('wipe', 'external'))).ruleId, 'real-only')
    assert.equal(p.decide(dry(tool('wipe', 'none'))).ruleId, 'previews')
  })

  it('a dry run is matched as a read: the kernel shows its tool with sideEffect none', () => {
    const p = policy({ rules: [{ id: 'reads', verdict: 'allow', match: { sideEffect: 'none' } }] })
    assert.equal(p.decide(dry(tool('issue_refund', 'none'))).verdict, 'allow')
    assert.equal(p.decide(request(tool('issue_refund', 'external'))).verdict, 'deny')
  })

  it('refuses a dryRun that is not a boolean (unknown match keys: test/previews.test.ts, through the host)', () => {
    assert.throws(() => policy({ rules: [{ id: 'x', verdict: 'allow', match: { dryRun: 'yes' } }] }))
  })
})
