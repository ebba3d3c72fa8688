/**
 * npm run bench — every bench, one after another, each in its own process (so one's heap and JIT do
 * not colour the next), with `--quick` passed on to each. Each prints its figures as ratios to a
 * baseline it measures in the same run; this only runs them, and fails when one fails.
 *
 *   npm run bench                 # about 20 minutes on a 2-core machine
 *   npm run bench -- --quick      # a few minutes: checks that every bench works, not for numbers
 *   npm run bench -- --only kernel,tool-search
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

interface Bench {
  name: string
  file: string
  /** Node flags the bench needs (a forced GC between measurements). */
  node?: string[]
  what: string
}

export const Benches: Bench[] = [
  {
    name: 'kernel',
    file: 'kernel.ts',
    node: ['--expose-gc'],
    what: 'kernel overhead per step, 1 and 200 tools, against Pi and the OpenAI Agents SDK',
  },
  { name: 'durability', file: 'durability.ts', what: 'durable steps against raw SQLite; loading a long run; PostgreSQL appends' },
  {
    name: 'long-run',
    file: 'long-run.ts',
    node: ['--expose-gc'],
    what: 'one 10,000-step run: time per step and heap, first window against last',
  },
  { name: 'reload', file: 'reload.ts', node: ['--expose-gc'], what: 'hot reload: edit-to-active latency and the heap slope per reload' },
  {
    name: 'tool-search',
    file: 'tool-search.ts',
    what: 'ranking quality on the own and a public set, BM25 against hybrid; latency to 10,000 tools',
  },
  { name: 'scale-out', file: 'scale-out.ts', what: '1, 2, 4 and 8 workers on one PostgreSQL, against one worker' },
]

function main() {
  const args = process.argv.slice(2)
  const quick = args.includes('--quick')
  const at = args.indexOf('--only')
  const only = at >= 0 ? new Set(args[at + 1]?.split(',')) : undefined
  const unknown = [...(only ?? [])].filter((name) => !Benches.some((b) => b.name === name))
  if (unknown.length) {
    console.error(`unknown bench: ${unknown.join(', ')}; the benches are ${Benches.map((b) => b.name).join(', ')}`)
    process.exit(2)
  }
  const failed: string[] = []
  const times: [string, number][] = []
  for (const bench of Benches.filter((b) => !only || only.has(b.name))) {
    console.log(`\n━━ ${bench.name}: ${bench.what}\n`)
    const started = Date.now()
    const run = spawnSync(
      process.execPath,
      [...(bench.node ?? []), '--import', 'tsx', join(import.meta.dirname, bench.file), ...(quick ? ['--quick'] : [])],
      {
        stdio: 'inherit',
      },
    )
    times.push([bench.name, (Date.now() - started) / 1000])
    if (run.status !== 0) failed.push(`${bench.name} (exit ${run.status ?? run.signal})`)
  }
  console.log(`\n━━ done: ${times.map(([name, s]) => `${name} ${s.toFixed(0)} s`).join(', ')}`)
  if (failed.length) {
    console.error(`failed: ${failed.join(', ')}`)
    process.exit(1)
  }
}

main()
