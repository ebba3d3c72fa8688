/**
 * Rule matching. Rules are checked in order; the first whose every condition holds decides. The policy
 * version covers the rules themselves, so editing a rule changes the version and voids tickets and
 * approvals made under the old rules.
 */
import { compileArgs, globPattern, hashArgs, type PolicyDecision, type PolicyRequest, type PolicyService } from 'cordage'
import type { Config, Match, Rule } from './manifest.ts'

export class RulePolicy implements PolicyService {
  readonly version: string
  private compiled: { rule: Rule; test: (request: PolicyRequest) => boolean }[]

  constructor(
    private config: Config,
    pluginVersion: string,
  ) {
    this.version = `policy-rules@${pluginVersion}+${hashArgs({ rules: config.rules, default: config.default }).slice(7, 15)}`
    this.compiled = config.rules.map((rule) => ({ rule, test: compile(rule.match) }))
  }

  decide(request: PolicyRequest): PolicyDecision {
    for (const { rule, test } of this.compiled) {
      if (test(request)) return { verdict: rule.verdict, ruleId: rule.id, reason: rule.reason ?? `matched rule ${rule.id}` }
    }
    return {
      verdict: this.config.default,
      ruleId: 'default',
      reason: `no rule matched ${request.tool.name}; the default is ${this.config.default}`,
    }
  }
}

function compile(match: Match): (request: PolicyRequest) => boolean {
  const tests: ((request: PolicyRequest) => boolean)[] = []
  if (match.tool !== undefined) {
    const patterns = (Array.isArray(match.tool) ? match.tool : [match.tool]).map(globPattern)
    tests.push((r) => patterns.some((p) => p.test(r.tool.name)))
  }
  if (match.sideEffect !== undefined) {
    const classes = Array.isArray(match.sideEffect) ? match.sideEffect : [match.sideEffect]
    tests.push((r) => classes.includes(r.tool.sideEffect))
  }
  if (match.needsApproval !== undefined) tests.push((r) => r.tool.needsApproval === match.needsApproval)
  if (match.args) {
    const test = compileArgs(match.args)
    tests.push((r) => test(r.args))
  }
  return (request) => tests.every((t) => t(request))
}
