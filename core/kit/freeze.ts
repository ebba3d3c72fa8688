/**
 * @module freeze
 * Deep freezing, for what must not change once it is on record: proposed arguments (bound to a hash)
 * and events handed to listeners (the store may keep the same objects).
 */

/** Roots frozen all the way down by {@link deepFreeze}: only these may have a remembered hash. */
const deep = new WeakSet<object>()

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !deep.has(value)) {
    // Marked first, so a cycle ends here. An object frozen at the top only may still hold mutable
    // members: walk it anyway.
    deep.add(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}

/** True when {@link deepFreeze} froze this value and everything in it. */
export function isDeepFrozen(value: object): boolean {
  return deep.has(value)
}

/**
 * Freezes a tree of plain data all the way down, without marking it for {@link isDeepFrozen}: for
 * values the kernel keeps but never hashes (a transcript's decisions). Marking costs a WeakSet entry per
 * object, which a long-lived process pays for again at every collection. Members of an object already
 * frozen are still walked (it may be frozen at the top only); the walk stops at depth 128, beyond what
 * any trust boundary lets data reach (64), so a cycle cannot run it forever.
 */
export function freezeData<T>(value: T, depth = 0): T {
  if (typeof value === 'object' && value !== null && depth < 128) {
    Object.freeze(value)
    for (const key of Object.keys(value)) freezeData((value as Record<string, unknown>)[key], depth + 1)
  }
  return value
}
