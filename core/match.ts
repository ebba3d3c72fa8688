/**
 * @module match
 * Tests on tool arguments, as written in presets and approvals: `amount: { gt: 100 }`,
 * `customer.region: { in: [eu, uk] }`, `path: /tmp/*`. Shared by policies (rule conditions) and by the
 * kernel (an approval granted for arguments that match a pattern).
 */
import { globPattern } from './glob.ts'
import { hashArgs } from './hash.ts'

/** A test on one argument: a glob string, an exact number/boolean, or an object of comparisons. */
export type ArgMatcher = string | number | boolean | {
  equals?: unknown
  regex?: string
  in?: unknown[]
  gt?: number
  gte?: number
  lt?: number
  lte?: number
  exists?: boolean
}

/** Argument path (dots for nesting) → test; every test must pass. */
export type ArgsPattern = Record<string, ArgMatcher>

/** A predicate for the whole arguments object. Throws a SyntaxError for a regex that does not compile. */
export function compileArgs(pattern: ArgsPattern): (args: unknown) => boolean {
  const tests = Object.entries(pattern).map(([path, matcher]) => {
    const test = compileArg(matcher)
    const keys = path.split('.')
    return (args: unknown) => test(dig(args, keys))
  })
  return (args) => tests.every((t) => t(args))
}

export function compileArg(matcher: ArgMatcher): (value: unknown) => boolean {
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

/** What is wrong with a pattern (a regex that does not compile), or undefined. */
export function checkArgsPattern(pattern: ArgsPattern): string | undefined {
  for (const [path, m] of Object.entries(pattern)) {
    if (typeof m === 'object' && m !== null && m.regex !== undefined) {
      try {
        new RegExp(m.regex)
      } catch (error) {
        return `${path}.regex is not a valid regular expression: ${(error as Error).message}`
      }
    }
  }
  return undefined
}

function dig(value: unknown, keys: string[]): unknown {
  let current = value
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}
