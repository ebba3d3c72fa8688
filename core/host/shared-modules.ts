/**
 * @module host/shared-modules
 * Plugins given by path may live anywhere on disk, outside this package and its node_modules. Their
 * imports of `cordage`, `cordis`, `zod` and `schemastery` must reach the host's own copies: a second
 * cordis breaks `instanceof Service`, a second zod breaks schemas handed across. The hook in
 * shared-modules-hook.mjs re-resolves those packages from here.
 */
import { register } from 'node:module'

export const SharedPackages = ['cordage', 'cordis', 'zod', 'schemastery']

let registered = false

/** Install the resolve hook once per process (before any plugin by path is imported). */
export function shareHostPackages(): void {
  if (registered) return
  registered = true
  register('./shared-modules-hook.mjs', import.meta.url, { data: { hostURL: import.meta.url, packages: SharedPackages } })
}
