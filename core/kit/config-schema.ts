/**
 * @module config-schema
 * Schema pieces plugin configs share.
 */
import { Schema } from 'cordis'
import { checkArgsPattern, type ArgsPattern } from './match.ts'
import { regexProblem } from './regex.ts'

/**
 * A string that must compile as a regular expression on the linear-time engine (core/kit/regex.ts); the
 * error names the key and what is wrong.
 */
export function regexPattern(key: string, fallback: string, flags = ''): Schema<string> {
  return Schema.transform(Schema.string(), (source: string) => {
    const problem = regexProblem(source, flags)
    if (problem) throw new TypeError(`$.${key} ${problem}`)
    return source
  }).default(fallback)
}

/**
 * Refuse lists that are empty and names that are blank where a rule or an approval uses them: an empty
 * `tool: []` or `approvers: ['']` is a rule that silently never fires, or an approver nobody can be.
 * Throws a TypeError whose message starts with the key path, like {@link checkArgsPatterns}.
 * @param lists path → value, for each list the config holds (non-lists are ignored)
 */
export function checkLists(lists: Iterable<[path: string, value: unknown]>): void {
  for (const [path, value] of lists) {
    if (!Array.isArray(value)) continue
    if (value.length === 0)
      throw new TypeError(`$${path} is an empty list: it matches nothing, so the rule would never fire; list something, or remove the key`)
    const blank = value.findIndex((v) => typeof v === 'string' && v.trim() === '')
    if (blank >= 0) throw new TypeError(`$${path}[${blank}] is blank: name something`)
  }
}

/**
 * Check every argument pattern in a config and throw a TypeError whose message starts with the key
 * path (`$.rules[2].match.args`), which is how the host tells where a config problem is.
 * @param patterns path → pattern, for each pattern the config holds
 */
export function checkArgsPatterns(patterns: Iterable<[path: string, pattern: ArgsPattern | undefined]>): void {
  for (const [path, pattern] of patterns) {
    if (pattern === undefined) continue
    const problem = checkArgsPattern(pattern)
    if (problem) throw new TypeError(`$${path} ${problem}`)
  }
}
