/**
 * @module thread-ids
 * The ids of a thread and of its turns as they are named: a thread id a person types in a command or a
 * caller passes (`--thread`, `StartOptions.thread`), and `t<n>`, the id of turn n, which the kernel,
 * the threads plugin and the store must agree on.
 */
import { CordageError } from '../contracts/errors.ts'

/** A thread id someone names: a store's thread id that starts with a letter or digit (it is typed and printed in commands). */
const NamedThreadId = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

/** `id` when it is a usable thread id; `invalid_input` otherwise. */
export function parseThreadId(id: unknown): string {
  if (typeof id !== 'string' || !NamedThreadId.test(id))
    throw new CordageError(
      'invalid_input',
      `thread id ${JSON.stringify(id)} is not usable: 1 to 128 characters, letters, digits and . _ : - (starting with a letter or digit)`,
    )
  return id
}

/** The turn id of turn `n`: `t1`, `t2`, ... */
export function turnIdOf(n: number): string {
  return `t${n}`
}
