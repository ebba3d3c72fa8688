/**
 * Rule matching. Rules are ordered once, by explicit priority (higher first; at equal priority deny
 * beats ask beats allow, then the order in the file); the first whose every condition holds decides.
 * The policy version covers the rules, the approvers and the environment, so changing any of them
 * voids approvals, grants and tickets made under the old ones.
 */
import { compileArgs, globPattern, hashArgs, type PolicyDecision, type PolicyRequest, type PolicyService } from 'cordage'
import type { Config, Match, Rule } from './manifest.ts'

const strictness = { deny: 0, ask: 1, allow: 2 } as const

export class RulePolicy implements PolicyService {
  readonly version: string
  private ordered: { rule: Rule; test: (request: PolicyRequest) => boolean }[]

  constructor(
    private config: Config,
    pluginVersion: string,
  ) {
    this.version = `policy-rules@${pluginVersion}+${hashArgs({ rules: config.rules, default: config.default, approvers: config.approvers, environment: config.environment ?? null }).slice(7, 15)}`
    this.ordered = config.rules
      .map((rule, index) => ({ rule, index, test: compile(rule.match, config.environment) }))
      .sort((a, b) => b.rule.priority - a.rule.priority || strictness[a.rule.verdict] - strictness[b.rule.verdict] || a.index - b.index)
  }

  decide(request: PolicyRequest): PolicyDecision {
    const hit = this.ordered.find(({ test }) => test(request))
    const decision: PolicyDecision = hit
      ? {
          verdict: hit.rule.verdict,
          ruleId: hit.rule.id,
          reason: hit.rule.reason ?? `matched rule ${hit.rule.id}`,
          // A copy: the kernel records it, and the rule's own must not be reachable through the decision.
          ...(hit.rule.constraints ? { constraints: { ...hit.rule.constraints } } : {}),
        }
      : {
          verdict: this.config.default,
          ruleId: 'default',
          reason: `no rule matched ${request.tool.name}; the default is ${this.config.default}`,
        }
    if (decision.verdict !== 'ask') return decision
    const approvers = hit?.rule.approvers ?? this.config.approvers
    if (approvers.length === 0) {
      return {
        verdict: 'deny',
        ruleId: decision.ruleId,
        reason: `${decision.reason}; it asks for approval and no approver is configured (set approvers), so it is denied to fail closed`,
      }
    }
    return { ...decision, approvers }
  }
}

function compile(match: Match, environment: string | undefined): (request: PolicyRequest) => boolean {
  const tests: ((request: PolicyRequest) => boolean)[] = []
  const names = (value: string | string[]) => (Array.isArray(value) ? value : [value]).map(globPattern)
  if (match.tool !== undefined) {
    const patterns = names(match.tool)
    tests.push((r) => patterns.some((p) => p.test(r.tool.name)))
  }
  if (match.namespace !== undefined) {
    const patterns = names(match.namespace)
    tests.push((r) => r.tool.name.includes('__') && patterns.some((p) => p.test(r.tool.name.slice(0, r.tool.name.indexOf('__')))))
  }
  if (match.sideEffect !== undefined) {
    const classes = Array.isArray(match.sideEffect) ? match.sideEffect : [match.sideEffect]
    tests.push((r) => classes.includes(r.tool.sideEffect))
  }
  if (match.needsApproval !== undefined) tests.push((r) => r.tool.needsApproval === match.needsApproval)
  if (match.dryRun !== undefined) tests.push((r) => (r.dryRun === true) === match.dryRun)
  if (match.args) {
    const test = compileArgs(match.args)
    tests.push((r) => test(r.args))
  }
  if (match.agent !== undefined) {
    const patterns = names(match.agent)
    tests.push((r) => patterns.some((p) => p.test(r.agent)))
  }
  if (match.environment !== undefined) {
    const wanted = Array.isArray(match.environment) ? match.environment : [match.environment]
    tests.push(() => environment !== undefined && wanted.includes(environment))
  }
  return (request) => tests.every((t) => t(request))
}
