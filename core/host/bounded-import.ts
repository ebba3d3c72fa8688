/**
 * @module host/bounded-import
 * Importing plugin code (a manifest, an entry module) with a time limit. A module whose top-level
 * `await` never settles would otherwise hang the host, or, once nothing else keeps Node's event loop
 * alive, end the process with exit code 13 and no word about which plugin did it. The limit's timer
 * is a normal (ref'd) one on purpose: it keeps the process alive until the answer is an error.
 */
import { pathToFileURL } from 'node:url'
import { importWithTypeScript } from './typescript-loader.ts'
import { CordageError } from '../contracts/errors.ts'

/** How long one plugin module may take to load, unless `CORDAGE_PLUGIN_LOAD_TIMEOUT_MS` says otherwise. */
export const DefaultPluginLoadTimeoutMs = 10_000

/**
 * The time limit for loading one plugin module: `CORDAGE_PLUGIN_LOAD_TIMEOUT_MS` (whole milliseconds ≥ 1)
 * or {@link DefaultPluginLoadTimeoutMs}.
 * @throws CordageError `invalid_input` when the variable is set to something else
 */
export function pluginLoadTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CORDAGE_PLUGIN_LOAD_TIMEOUT_MS
  if (raw === undefined || raw.trim() === '') return DefaultPluginLoadTimeoutMs
  const ms = Number(raw)
  if (!Number.isInteger(ms) || ms < 1 || ms > 2_147_483_647) {
    throw new CordageError(
      'invalid_input',
      `CORDAGE_PLUGIN_LOAD_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got ${JSON.stringify(raw)}; unset it for the default (${DefaultPluginLoadTimeoutMs} ms)`,
    )
  }
  return ms
}

/**
 * `import(file)`, or `plugin_load_timeout` naming the plugin folder once the limit passes. The module
 * may still finish loading later; nothing waits for it.
 * @param folder the plugin folder (or package), for the message
 * @param what what the file is to the plugin, for the message: "manifest", "entry module"
 */
export async function importPluginModule(file: string, folder: string, what: string): Promise<{ default?: unknown }> {
  const ms = pluginLoadTimeoutMs()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new CordageError(
            'plugin_load_timeout',
            `plugin folder ${folder}: its ${what} ${file} did not finish loading within ${ms} ms (a top-level await that never settles?); ` +
              'fix the module so that importing it finishes, or raise CORDAGE_PLUGIN_LOAD_TIMEOUT_MS if it is only slow',
          ),
        ),
      ms,
    )
  })
  try {
    return await Promise.race([importWithTypeScript(pathToFileURL(file).href, file), timeout])
  } finally {
    clearTimeout(timer)
  }
}
