/**
 * npm run bench:startup — cold start of the `cordage` executable: the repository's (TypeScript through
 * tsx) against the compiled package in dist/ (`npm run build`, run first by this bench). Two commands:
 * `cordage --version` and `cordage run` of presets/minimal.yml (the scripted model, memory store, one
 * step). Each is a fresh `node` process; the variants alternate so the machine's drift hits both alike.
 * Prints the median and p90 wall time over the runs, and the ratio of medians.
 *
 * `--runs N` (default 15), `--quick` (5 runs; to check the bench, not for numbers).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const at = process.argv.indexOf('--runs')
const runs = at > 0 ? Number(process.argv[at + 1]) : process.argv.includes('--quick') ? 5 : 15

execFileSync(process.execPath, ['--import', 'tsx', join(root, 'build/dist.ts')], { cwd: root, stdio: 'ignore' })

const variants = [
  { name: 'source (tsx)', bin: join(root, 'core/cli/bin.js'), cwd: root },
  { name: 'compiled (dist)', bin: join(root, 'dist/core/cli/bin.js'), cwd: join(root, 'dist') },
]
const commands = [
  { name: 'cordage --version', argv: ['--version'], expect: /^cordage \d/ },
  { name: 'cordage run minimal', argv: ['run', '--preset', 'presets/minimal.yml'], expect: /COMPLETED/ },
]

function once(bin: string, argv: string[], cwd: string, expect: RegExp): number {
  const start = process.hrtime.bigint()
  const child = spawnSync(process.execPath, [bin, ...argv], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (child.status !== 0 || !expect.test(child.stdout)) {
    throw new Error(`startup bench: ${bin} ${argv.join(' ')} exited ${child.status}: ${child.stderr || child.stdout}`)
  }
  return ms
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!

console.log(`cold start, ${runs} runs each, node ${process.version}\n`)
console.log(
  `${'command'.padEnd(22)}${variants.map((v) => `${v.name} median / p90`.padStart(34)).join('')}${'compiled / source'.padStart(20)}`,
)
for (const command of commands) {
  const times = variants.map(() => [] as number[])
  for (const v of variants) once(v.bin, command.argv, v.cwd, command.expect) // warm the disk cache
  for (let i = 0; i < runs; i++) variants.forEach((v, k) => times[k]!.push(once(v.bin, command.argv, v.cwd, command.expect)))
  const medians = times.map((t) => quantile(t, 0.5))
  console.log(
    command.name.padEnd(22) +
      times.map((t, k) => `${medians[k]!.toFixed(0)} ms / ${quantile(t, 0.9).toFixed(0)} ms`.padStart(34)).join('') +
      `${(medians[1]! / medians[0]!).toFixed(2)}x`.padStart(20),
  )
}
