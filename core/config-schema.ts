/**
 * @module config-schema
 * Schema pieces plugin configs share.
 */
import { Schema } from 'cordis'

/** A string that must compile as a regular expression; the error names the key and what is wrong. */
export function regexPattern(key: string, fallback: string): Schema<string> {
  return Schema.transform(Schema.string(), (source: string) => {
    try {
      new RegExp(source)
    } catch (error) {
      throw new TypeError(`$.${key} is not a valid regular expression: ${(error as Error).message}`)
    }
    return source
  }).default(fallback)
}
