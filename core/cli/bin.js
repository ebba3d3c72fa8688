#!/usr/bin/env node
// The `cordage` executable: TypeScript sources run through tsx, so there is no build step.
import { register } from 'tsx/esm/api'

register()
// `cordage runs | head -1`: the reader went away, which is not an error of the command.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})
const { main } = await import('./main.ts')
const code = await main(process.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  color: process.stdout.isTTY && !process.env.NO_COLOR,
})
process.exitCode = code
// `cordage eval` starts and stops an app per case: a plugin's stray timer must not keep the finished
// command alive (stdout and stderr to pipes and files are written synchronously on Linux).
if (process.argv[2] === 'eval') process.exit(code)
