/**
 * @module config-schema
 * Schema pieces plugin configs share.
 */
import { Schema } from 'cordis'
import { checkArgsPattern, type ArgsPattern } from './match.ts'
import { regexProblem } from './regex.ts'

/**
 * A string that must compile as a regular expression on the linear-time engine (core/regex.ts); the
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
