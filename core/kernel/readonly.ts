/**
 * @module readonly
 * What services see of run state: a read-only view. The loop hands `state` to context, tools, policy,
 * guardrail, progress, compactor and verifier; `Readonly<RunState>` is only a type, and the object is
 * the kernel's own. A service that pushed a grant into `state.grants`, set an action's status to
 * `approved` or changed its arguments would decide what the kernel does next. The view reads like the
 * state (nested objects and arrays are views too, made once each and remembered) and refuses every
 * change with a TypeError. Frozen values inside (proposed arguments, events) are handed out as they
 * are: they cannot change anyway.
 */

const views = new WeakMap<object, object>()

const refuse = (what: string) => (): never => {
  throw new TypeError(`run state is read-only for services: ${what} is refused (the kernel alone changes it, from recorded events)`)
}

const handler: ProxyHandler<object> = {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver)
    return typeof value === 'object' && value !== null ? readonlyView(value) : value
  },
  set: refuse('setting a property'),
  deleteProperty: refuse('deleting a property'),
  defineProperty: refuse('defining a property'),
  setPrototypeOf: refuse('changing a prototype'),
  preventExtensions: refuse('preventing extensions'),
}

/** A read-only view of `value` (the value itself when it is frozen, or not an object). */
export function readonlyView<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  let view = views.get(value)
  if (!view) views.set(value, (view = new Proxy(value, handler)))
  return view as T
}
