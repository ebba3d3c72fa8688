/**
 * @module match
 * Tests on tool arguments, as written in presets and approvals: `amount: { gt: 100 }`,
 * `customer.region: { in: [eu, uk] }`, `path: /tmp/*`. Shared by policies (rule conditions) and by the
 * kernel (an approval granted for arguments that match a pattern).
 *
 * Strict, because a test that matches by mistake widens permissions: an unknown operator (`inn:` for
 * `in:`), an empty test, an operand of the wrong type or an argument path that reaches into the
 * prototype (`constructor`) is an error when the pattern is compiled, never a match. Regular
 * expressions run on the linear-time engine (core/kit/regex.ts): argument values come from the model.
 */
import { CordageError } from '../contracts/errors.ts'
import { globPattern } from './glob.ts'
import { hashArgs } from './hash.ts'
import { safeRegex } from './regex.ts'
import type { ArgMatcher, ArgsPattern } from '../contracts/data.ts'
export type { ArgMatcher, ArgsPattern } from '../contracts/data.ts'

/** The operators an object test may use, and what each takes. */
export const ArgOperators = ['equals', 'regex', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'] as const
Object.freeze(ArgOperators)

type Test = (value: unknown) => boolean

/**
 * A predicate for the whole arguments object.
 * @throws CordageError `invalid_input` naming the path, the operator and what is wrong with it
 */
export function compileArgs(pattern: ArgsPattern): (args: unknown) => boolean {
  if (!isPlainObject(pattern)) throw invalid('', `an argument pattern must be a mapping of argument path → test, got ${describe(pattern)}`)
  const tests = Object.entries(pattern).map(([path, matcher]) => {
    const keys = path.split('.')
    if (keys.some((k) => k === '')) throw invalid(path, 'an argument path is names joined by dots, without empty parts')
    const test = compileArg(matcher, path)
    return (args: unknown) => test(dig(args, keys))
  })
  return (args) => tests.every((t) => t(args))
}

/**
 * A predicate for one argument value.
 * @param where the argument path, for error messages
 * @throws CordageError `invalid_input` as {@link compileArgs}
 */
export function compileArg(matcher: ArgMatcher, where = '(argument)'): Test {
  if (typeof matcher === 'string') {
    const glob = globPattern(matcher)
    return (v) => typeof v === 'string' && glob.test(v)
  }
  if (typeof matcher === 'number') {
    if (!Number.isFinite(matcher)) throw invalid(where, `${matcher} is not a number a value can equal`)
    return (v) => v === matcher
  }
  if (typeof matcher === 'boolean') return (v) => v === matcher
  if (!isPlainObject(matcher)) {
    throw invalid(
      where,
      `a test is a glob string, a number, a boolean, or an object of operators (${ArgOperators.join(', ')}); got ${describe(matcher)}${matcher === null ? ' (to test for null, write { equals: null })' : ''}`,
    )
  }
  return compileOperators(matcher, where)
}

/** An object of operators as one test: every operator known, at least one, each operand of its type; all must hold. */
function compileOperators(matcher: object, where: string): Test {
  const keys = Object.keys(matcher)
  const unknown = keys.filter((k) => !(ArgOperators as readonly string[]).includes(k))
  if (unknown.length)
    throw invalid(
      where,
      `unknown operator${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; the operators are ${ArgOperators.join(', ')}`,
    )
  if (!keys.length)
    throw invalid(where, `an empty test would match every value; name an operator (${ArgOperators.join(', ')}), or write { exists: true }`)
  const m = matcher as Record<string, unknown>
  const tests: Test[] = []
  if ('exists' in m) {
    if (typeof m.exists !== 'boolean') throw invalid(where, `exists takes true or false, got ${describe(m.exists)}`)
    const exists = m.exists
    tests.push((v) => (v !== undefined) === exists)
  }
  if ('equals' in m) {
    const wanted = hashOf(m.equals, where, 'equals')
    tests.push((v) => v !== undefined && hashOrUndefined(v) === wanted)
  }
  if ('in' in m) {
    if (!Array.isArray(m.in)) throw invalid(where, `in takes a list of values, got ${describe(m.in)}`)
    if (m.in.length === 0)
      throw invalid(where, 'in: [] matches no value at all (a deny rule with it never fires); list the values, or remove the test')
    const wanted = new Set(m.in.map((x, i) => hashOf(x, where, `in[${i}]`)))
    tests.push((v) => v !== undefined && wanted.has(hashOrUndefined(v) ?? ''))
  }
  if ('regex' in m) {
    if (typeof m.regex !== 'string') throw invalid(where, `regex takes a string, got ${describe(m.regex)}`)
    let re
    try {
      re = safeRegex(m.regex)
    } catch (error) {
      throw invalid(where, `regex: ${(error as Error).message}`)
    }
    tests.push((v) => typeof v === 'string' && re.test(v))
  }
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (!(op in m)) continue
    const bound = m[op]
    if (typeof bound !== 'number' || !Number.isFinite(bound)) throw invalid(where, `${op} takes a number, got ${describe(bound)}`)
    const holds =
      op === 'gt'
        ? (n: number) => n > bound
        : op === 'gte'
          ? (n: number) => n >= bound
          : op === 'lt'
            ? (n: number) => n < bound
            : (n: number) => n <= bound
    tests.push((v) => typeof v === 'number' && holds(v))
  }
  return (v) => tests.every((t) => t(v))
}

/** What is wrong with a pattern (an unknown operator, a bad operand, a regex that does not compile), or undefined. */
export function checkArgsPattern(pattern: ArgsPattern): string | undefined {
  try {
    compileArgs(pattern)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

/** An own property at each step: a path never reaches into the prototype (`constructor`, `__proto__`). */
function dig(value: unknown, keys: string[]): unknown {
  let current = value
  for (const key of keys) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

function hashOf(value: unknown, where: string, op: string): string {
  try {
    return hashArgs(value)
  } catch (error) {
    throw invalid(where, `${op}: ${(error as Error).message}`)
  }
}

/** The hash of a value from the arguments; undefined when it has none (it then equals nothing). */
function hashOrUndefined(value: unknown): string | undefined {
  try {
    return hashArgs(value)
  } catch {
    return undefined
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${String(value)}`
}

function invalid(path: string, problem: string): CordageError {
  return new CordageError('invalid_input', path ? `argument test "${path}": ${problem}` : problem)
}
