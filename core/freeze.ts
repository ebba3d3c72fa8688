/**
 * @module freeze
 * Deep freezing, for what must not change once it is on record: proposed arguments (bound to a hash)
 * and events handed to listeners (the store may keep the same objects).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}
