/**
 * @module env
 * The environment a child process gets when it runs code the model may have written (a test command, a
 * check): by default only what a build needs to find its tools, its home and its temporary files, and the
 * locale. Not the harness's own environment: model provider keys have no business there, and a test
 * runner's own variables (NODE_TEST_CONTEXT would make a nested `node --test` talk to the outer one)
 * would change what the child does.
 */

/** The variables a child inherits by default, when the harness has them. */
export const MinimalEnvNames: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'WINDIR',
])

export interface MinimalEnvOptions {
  /** Pass the whole environment instead of the names in MinimalEnvNames. Default false. */
  inherit?: boolean
  /** The environment to take from. Default `process.env`. */
  from?: NodeJS.ProcessEnv
}

/**
 * A child's environment: the MinimalEnvNames the harness has (or all of its environment with
 * `inherit`), then `extra`, which wins over both.
 */
export function minimalEnv(extra: Record<string, string> = {}, options: MinimalEnvOptions = {}): NodeJS.ProcessEnv {
  const from = options.from ?? process.env
  const env: NodeJS.ProcessEnv = {}
  if (options.inherit) Object.assign(env, from)
  else for (const name of MinimalEnvNames) if (from[name] !== undefined) env[name] = from[name]
  return { ...env, ...extra }
}
