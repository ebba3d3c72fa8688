/**
 * @module typescript-loader
 * Plugins written in TypeScript under a compiled host. The repository's CLI and its tests run with tsx
 * registered from the start; the compiled package (dist/, `npm run build`) starts without it, so
 * `cordage --version` and a preset of JavaScript plugins never load a TypeScript compiler. Before the
 * first `.ts` plugin file is imported there, tsx is registered; from then on TypeScript loads as in the
 * repository. It is registered before that import, not after a failed one: Node remembers a failed
 * module, and the plugin's own imports of it would fail again.
 */
import { CordageError } from '../contracts/errors.ts'

const TypeScriptFile = /\.[mc]?tsx?$/
/** This file runs as TypeScript only when a TypeScript loader is already in the process. */
const hostIsTypeScript = TypeScriptFile.test(new URL(import.meta.url).pathname)
let registering: Promise<void> | undefined

/** `import(url)`, registering tsx first, once, when `file` is TypeScript and nothing in the process loads it. */
export async function importWithTypeScript(url: string, file: string): Promise<{ default?: unknown }> {
  if (TypeScriptFile.test(file) && !hostIsTypeScript && !tsxStartedWithProcess()) {
    registering ??= registerTsx()
    await registering
  }
  return await import(url)
}

/** An application started with `--import tsx` (or `tsx app.ts`, which does the same) has it already. */
function tsxStartedWithProcess(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /\btsx\b/.test(arg))
}

async function registerTsx(): Promise<void> {
  let api: { register: () => unknown }
  try {
    api = await import('tsx/esm/api')
  } catch (error) {
    registering = undefined
    throw new CordageError(
      'manifest_invalid',
      'a plugin is written in TypeScript and no TypeScript loader is available: install tsx beside cordage (npm install tsx), or compile the plugin to JavaScript',
      { cause: error },
    )
  }
  api.register()
}
