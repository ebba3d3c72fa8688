/**
 * @module cordage/kit
 * Helpers for plugin authors: argument matching and globs, linear-time regular expressions, canonical
 * hashing, secret scrubbing, token estimates, transcript entries as messages, config schemas, child
 * processes and their environment, run summaries, the checks a store makes on what it reads, thread
 * ids, paths held inside a workspace and a constrained allow's pathPrefix, and which calls an approval
 * grant covers. Each depends on the contracts only, never on the kernel, so a plugin can use them
 * without reaching into the loop. `cordage` re-exports them too.
 */
export * from './hash.ts'
export * from './freeze.ts'
export * from './glob.ts'
export * from './match.ts'
export * from './regex.ts'
export * from './secrets.ts'
export * from './scrubbed-deltas.ts'
export * from './tokens.ts'
export * from './token-calibration.ts'
export * from './transcript.ts'
export * from './config-schema.ts'
export * from './process.ts'
export * from './env.ts'
export * from './summary.ts'
export * from './store-kit.ts'
export * from './store-threads.ts'
export * from './thread-ids.ts'
export * from './closest.ts'
export * from './vectors.ts'
export * from './paths.ts'
export * from './grants.ts'
export * from './slices.ts'
