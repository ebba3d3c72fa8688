/**
 * @module manifest
 * What a plugin declares about itself, and {@link definePlugin}, which turns a manifest and an apply
 * function into a cordis plugin. The manifest is plain data so the host can check it (versions,
 * requirements, config) before any plugin code runs; see core/host/manifest-check.ts.
 */
import type { Context, Schema } from 'cordis'

export interface Manifest {
  /** Lower-case letters, digits and `-`, e.g. `policy-rules`. */
  name: string
  /** Semver version of the plugin, e.g. `1.2.0`. */
  version: string
  description?: string
  /** Services the plugin sets, with the contract version it implements: `{ policy: '1.0.0' }`. */
  provides?: Record<string, string>
  /** Services the plugin needs, with a semver range of contract versions: `{ tools: '^1.0.0' }`. */
  requires?: Record<string, string>
  /** Services the plugin uses when present. */
  optional?: Record<string, string>
  /** schemastery schema of the plugin's config; the host validates config against it before plugging. */
  config?: Schema
  /**
   * Config keys whose value names an environment variable that holds a secret (`['apiKeyEnv']`), or
   * is an object each of whose values names one (`headersEnv: { authorization: OTEL_TOKEN }`). The
   * host reads those variables and every run of the agent scrubs their values from what it records
   * (core/kit/secrets.ts).
   */
  secrets?: string[]
}

/**
 * The context a Cordage plugin's `apply` receives: the agent's cordis context (its services are that
 * agent's own), with what the host adds to it.
 */
/**
 * Marks an agent's context (the kernel's createAgentContext sets it to the agent's name): hooks
 * registered under it only receive that agent's run events, and a plugin's swap state is the agent's.
 */
export const AgentKey: unique symbol = Symbol.for('cordage.agent')

export interface PluginContext extends Context {
  /**
   * The absolute folder of the preset file the agent was loaded from (the file named, when it
   * `extends` others). Resolve relative paths of your config against it
   * (`resolve(ctx.baseDir, config.file)`), never against `process.cwd()`, so that a preset means the
   * same wherever the command runs. Outside the host (a bare cordis `Context` in a test) it is cordis's
   * default, the working directory. Read-only: a plugin that changed it would move every other
   * plugin's files.
   */
  readonly baseDir: string
}

export interface CordagePlugin<C = any> {
  readonly manifest: Manifest
  /** cordis plugin name, `name@version`. */
  readonly name: string
  /** Every Cordage plugin may be used by several agents (cordis would otherwise apply it once per root). */
  readonly reusable: true
  readonly inject: Record<string, { required: boolean }>
  apply(ctx: PluginContext, config: C): void | Promise<void>
}

/**
 * @example
 * export default definePlugin(manifest, (ctx, config: Config) => {
 *   ctx.set('policy', new RulePolicy(config.rules))
 * })
 */
export function definePlugin<C = any>(
  manifest: Manifest,
  apply: (ctx: PluginContext, config: C) => void | Promise<void>,
): CordagePlugin<C> {
  const inject: Record<string, { required: boolean }> = {}
  for (const name of Object.keys(manifest.requires ?? {})) inject[name] = { required: true }
  for (const name of Object.keys(manifest.optional ?? {})) inject[name] = { required: false }
  return { manifest, name: `${manifest.name}@${manifest.version}`, reusable: true, inject, apply }
}
