#!/usr/bin/env node
// The `cordage` executable: TypeScript sources run through tsx, so there is no build step.
const argv = process.argv.slice(2)

if (argv[0] === '--version' || argv[0] === '-v') {
  // Answered before the TypeScript loader and the CLI's modules (most of a cold start): the package's
  // version, which test/cli-version.test.ts holds equal to the kernel's (what main.ts prints).
  const { readFileSync } = await import('node:fs')
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`cordage ${version}\n`)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  // `cordage runs | head -1`: the reader went away, which is not an error of the command.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
  const { main } = await import('./main.ts')
  const code = await main(argv, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    write: (text) => process.stdout.write(text),
    errWrite: (text) => process.stderr.write(text),
    // Colour follows stdout's terminal and FORCE_COLOR / NO_COLOR (cli/color.ts); the status line, stderr's.
    outIsTTY: !!process.stdout.isTTY,
    errIsTTY: !!process.stderr.isTTY,
  })
  process.exitCode = code
  // `cordage eval` starts and stops an app per case: a plugin's stray timer must not keep the finished
  // command alive (stdout and stderr to pipes and files are written synchronously on Linux).
  if (argv[0] === 'eval') process.exit(code)
}
