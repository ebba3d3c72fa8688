/**
 * @module store-writer
 * Only the kernel writes run stores. A plugin can see its agent's `store` service (to read runs), but a
 * write there (an event that says a person approved, a standing grant, a lease) would let it steer runs
 * around policy. So every write method of the store contract takes the kernel's writer, and the stores
 * check it with `assertKernelWriter` (exported from `cordage`: checking is harmless).
 *
 * Two things keep the writer the kernel's:
 * - It is not ambient. The host hands it to each agent runtime it builds (`AgentOptions.writer`), which
 *   keeps it in private fields; a runtime built without it (say by a plugin) can read runs, and every
 *   write it tries is refused. This module is not part of the public API (`cordage` does not export
 *   it, and the package's exports map does not reach it): the host imports it, and so do the
 *   project's own tests. Code loaded in the process can still import any file by its path: that is
 *   outside what the kernel can promise (docs/concepts/security.md).
 * - It is not handed to a store that could pass it on. Before each write the kernel checks the store
 *   object ({@link guardStore}): a plugin that replaced a write method on the store it can see (to catch
 *   the writer on its way in) makes the write fail instead.
 */
import { CordageError } from '../contracts/errors.ts'
import type { StoreService, StoreWriter } from '../contracts/services/store.ts'

/** The kernel's writer. Stores compare identity: a copy or a look-alike is refused. */
export const KernelWriter: StoreWriter = Object.freeze({ writer: 'cordage-kernel' as const })

const WriteMethods = [
  'append',
  'claim',
  'renew',
  'release',
  'claimNext',
  'requestCancel',
  'putGrant',
  'revokeGrant',
  'closeThread',
  'putArtifact',
] as const

/**
 * The store, once it is sure that what the kernel calls on it is the store's own code: the object is
 * frozen, or its write methods come from a frozen prototype and none is an own property of the object
 * (which anyone holding the service could have set).
 * @throws CordageError `store_write_refused` naming what is wrong
 */
export function guardStore<S extends StoreService>(store: S): S {
  // Cheap enough to ask before every write: a frozen store needs no more, another a lookup per method.
  const frozen = Object.isFrozen(store)
  const proto = Object.getPrototypeOf(store) as object | null
  const replaced = frozen ? undefined : WriteMethods.find((m) => Object.hasOwn(store, m))
  if (replaced)
    throw new CordageError(
      'store_write_refused',
      `the store's ${replaced} is a property set on the store object, not the store's own method: something replaced it (a plugin catching the kernel's writer?); the kernel writes nothing through it`,
    )
  if (!frozen && (proto === null || !Object.isFrozen(proto)))
    throw new CordageError(
      'store_write_refused',
      `the store's class prototype is not frozen, so anyone holding the store could replace its write methods: a store plugin freezes its class (Object.freeze(MyStore.prototype)) or provides a frozen object`,
    )
  return store
}

/**
 * Throw `store_write_refused` unless `writer` is the kernel's. What every store calls first in each
 * write method.
 */
export function assertKernelWriter(writer: unknown, what: string): void {
  if (writer !== KernelWriter)
    throw new CordageError(
      'store_write_refused',
      `${what} refused: run stores take writes from the kernel only (a plugin may read runs, never write them); steer runs with the kernel's commands: approve, reject, resume, cancel`,
    )
}
