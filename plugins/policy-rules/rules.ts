/**
 * Rule matching. Rules are checked in order; the first whose every condition holds decides. The policy
 * version covers the rules themselves, so editing a rule changes the version and voids tickets and
 * approvals made under the old rules.
 */
import { globPattern, hashArgs, type PolicyDecision, type PolicyRequest, type PolicyService } from 'cordage'
import type { ArgMatcher, Config, Match, Rule } from './manifest.ts'

export class RulePolicy implements PolicyService {
  readonly version: string
  private compiled: { rule: Rule; test: (request: PolicyRequest) => boolean }[]

  constructor(private config: Config, pluginVersion: string) {
    this.version = `policy-rules@${pluginVersion}+${hashArgs({ rules: config.rules, default: config.default }).slice(7, 15)}`
    this.compiled = config.rules.map((rule) => ({ rule, test: compile(rule.match) }))
  }

  decide(request: PolicyRequest): PolicyDecision {
    for (const { rule, test } of this.compiled) {
      if (test(request)) return { verdict: rule.verdict, ruleId: rule.id, reason: rule.reason ?? `matched rule ${rule.id}` }
    }
    return { verdict: this.config.default, ruleId: 'default', reason: `no rule matched ${request.tool.name}; the default is ${this.config.default}` }
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
  for (const [path, matcher] of Object.entries(match.args ?? {})) {
    const test = compileArg(matcher)
    const keys = path.split('.')
    tests.push((r) => test(dig(r.args, keys)))
  }
  return (request) => tests.every((t) => t(request))
}

function compileArg(matcher: ArgMatcher): (value: unknown) => boolean {
  if (typeof matcher === 'string') {
    const re = globPattern(matcher)
    return (v) => typeof v === 'string' && re.test(v)
  }
  if (typeof matcher !== 'object' || matcher === null) return (v) => v === matcher
  const re = matcher.regex !== undefined ? new RegExp(matcher.regex) : undefined
  return (v) => {
    if (matcher.exists !== undefined && (v !== undefined) !== matcher.exists) return false
    if (matcher.equals !== undefined && hashArgs(v) !== hashArgs(matcher.equals)) return false
    if (matcher.in !== undefined && !matcher.in.some((x) => hashArgs(x) === hashArgs(v))) return false
    if (re && !(typeof v === 'string' && re.test(v))) return false
    const numeric = [matcher.gt, matcher.gte, matcher.lt, matcher.lte].some((x) => x !== undefined)
    if (numeric && typeof v !== 'number') return false
    const n = v as number
    if (matcher.gt !== undefined && !(n > matcher.gt)) return false
    if (matcher.gte !== undefined && !(n >= matcher.gte)) return false
    if (matcher.lt !== undefined && !(n < matcher.lt)) return false
    if (matcher.lte !== undefined && !(n <= matcher.lte)) return false
    return true
  }
}

function dig(value: unknown, keys: string[]): unknown {
  let current = value
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}
