/**
 * @module eval/records
 * Side effects counted from a tool's own record of them (a JSON-lines file it appends to), not from
 * the run's events: events say what the harness believes happened, the record says what the tool did,
 * and an eval that counted events could never catch the harness being wrong about an effect.
 */
import { readFileSync } from 'node:fs'
import { CordageError } from '../contracts/errors.ts'
import { canonicalJson } from '../kit/hash.ts'

export interface RecordCount {
  /** Records in the file (one per non-blank line). */
  count: number
  /** Records minus distinct keys: 0 when every effect happened once. */
  duplicates: number
}

/**
 * Count the records of a JSON-lines file and those that repeat an earlier one.
 * @param key a field (a dotted path such as `ticket.id`) whose equal values mean the same effect;
 *   without it, two equal records are. Equal is compared on canonical JSON: the order of an object's
 *   keys and the spacing do not matter, 1 and "1" differ.
 * @returns zero records for a file that does not exist (the tool never wrote anything)
 * @throws CordageError `invalid_input` naming the file and line of a line that is not JSON, or of a
 *   record without the key: a record that cannot be read is never counted as no effect
 */
export function countRecords(file: string, key?: string): RecordCount {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { count: 0, duplicates: 0 }
    throw new CordageError('invalid_input', `records file ${file} cannot be read: ${(error as Error).message}`)
  }
  const seen = new Set<string>()
  let count = 0
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim()
    if (!line) continue
    let record: unknown
    try {
      record = JSON.parse(line)
    } catch (error) {
      throw new CordageError(
        'invalid_input',
        `records file ${file}, line ${index + 1}: not JSON (${(error as Error).message}); each line must be one JSON record`,
      )
    }
    count += 1
    const where = `${file}, line ${index + 1}`
    const value = key === undefined ? record : valueAt(record, key, where)
    try {
      seen.add(canonicalJson(value))
    } catch (error) {
      throw new CordageError('invalid_input', `records file ${where}: ${(error as Error).message}`)
    }
  }
  return { count, duplicates: count - seen.size }
}

/** The value at a dotted path of a record. */
function valueAt(record: unknown, key: string, where: string): unknown {
  let value = record
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) {
      // Fail closed: a record without its key cannot be told apart from any other, nor be said to be unique.
      throw new CordageError('invalid_input', `records file ${where}: the record has no "${key}" (the key the case names for one effect)`)
    }
    value = (value as Record<string, unknown>)[part]
  }
  return value
}
