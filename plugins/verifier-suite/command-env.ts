/**
 * The environment a check command gets. By default only what a build needs to find its tools and
 * temporary files, not the harness's own environment: the command runs code the model may have written,
 * and model provider keys or a test runner's own variables (NODE_TEST_CONTEXT would make a nested
 * `node --test` talk to the outer one) have no business there.
 */
const Passed = [
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
]

export function commandEnv(extra: Record<string, string>, inherit: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  if (inherit) Object.assign(env, process.env)
  else for (const name of Passed) if (process.env[name] !== undefined) env[name] = process.env[name]
  return { ...env, ...extra }
}
