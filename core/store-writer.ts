/**
 * @module store-writer
 * Only the kernel writes run stores. A plugin can see its agent's `store` service (to read runs), but a
 * write there (an event that says a person approved, a standing grant, a lease) would let it steer runs
 * around policy. So every write method of the store contract takes the kernel's writer, and the stores
 * check it with {@link assertKernelWriter} (exported from `cordage`: checking is harmless).
 *
 * This module is not part of the public API (`cordage` does not export it, and the package's exports
 * map does not reach it): the kernel imports it, and so do the project's own store tests. Code loaded
 * in the process can still import any file by its path: that is outside what the kernel can promise
 * (docs/security.md).
 */
import type { StoreWriter } from './services/store.ts'

/** The kernel's writer. Stores compare identity: a copy or a look-alike is refused. */
export const KernelWriter: StoreWriter = Object.freeze({ writer: 'cordage-kernel' as const })
