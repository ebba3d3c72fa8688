/**
 * @module later
 * Code that waits only when what it waits for is not there yet. Each `await` costs a promise, a job on
 * the microtask queue and a suspended frame, even for a value that was there all along; the loop's
 * stages mostly ask services that answer at once (the memory store, a rule policy, a tool body that
 * returns a value), so each stage is a generator that yields what it would await (`const x = yield*
 * wait(value)`, or `yield promiseOfNothing`), and calls the next stage's generator with `yield*`.
 * {@link flow} runs the steps synchronously while each value yielded is there, and as a promise from
 * the first one that is not: a pass of the loop with nothing to wait for allocates no promise at all.
 *
 * A throw on the synchronous path is a throw, not a rejected promise: callers that await what they are
 * given see both alike.
 */

/** Steps that yield what they wait for: run by {@link flow}, or from another flow's steps by `yield*`. */
export type Flow<T> = Generator<unknown, T, unknown>

/** Whether `value` is a promise (or a thenable): what has to be waited for. */
export function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/** A step of a {@link flow}: waits for `value` when it is a promise, and gives it back typed. */
export function* wait<T>(value: T | Promise<T>): Flow<T> {
  return (isThenable(value) ? yield value : value) as T
}

/** Run `steps` to its end: its result at once when nothing it yielded had to be waited for, else a promise of it. */
export function flow<T>(steps: Flow<T>): T | Promise<T> {
  let step = steps.next()
  while (!step.done && !isThenable(step.value)) step = steps.next(step.value)
  return step.done ? step.value : finish(steps, step.value as PromiseLike<unknown>)
}

async function finish<T>(steps: Flow<T>, pending: PromiseLike<unknown>): Promise<T> {
  for (;;) {
    // A rejection is thrown into the generator, where the await was; a throw out of it ends the flow.
    // Promise.resolve: a thenable that is not a promise is adopted as `await` would (a native promise is itself).
    let step = await Promise.resolve(pending).then(
      (value) => steps.next(value),
      (error) => steps.throw(error),
    )
    while (!step.done && !isThenable(step.value)) step = steps.next(step.value)
    if (step.done) return step.value
    pending = step.value as PromiseLike<unknown>
  }
}
