/**
 * npm run bench:ab -- --against REV — this tree's Cordage against another commit's, timed in turn, run
 * by run (measurePair), in one process. On this machine Cordage alone moves by half between two runs of
 * the kernel bench minutes apart; the ratio of two trees timed in turn holds within a few percent, so a
 * change of a tenth can be seen. REV is put in a temporary folder (git archive) with this checkout's
 * node_modules, and its own bench/cordage.ts builds and loads its own compiled package, as this one does.
 *
 * Options: --steps N (50), --rounds N (3), --seconds N per round (6). Prints, per round, the medians in
 * µs/step and new / old; below 1 is faster.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gc, measurePair, numberArg, type Subject } from './measure.ts'

const at = process.argv.indexOf('--against')
const rev = at > 0 ? process.argv[at + 1] : undefined
if (!rev) throw new Error('bench:ab: say which commit to compare with: npm run bench:ab -- --against REV')
gc()
const root = resolve(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'cordage-ab-'))
try {
  execFileSync('sh', ['-c', `git -C "${root}" archive "${rev}" | tar -x -C "${dir}"`], { stdio: ['ignore', 'ignore', 'inherit'] })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const old = (await import(join(dir, 'bench/cordage.ts'))) as typeof import('./cordage.ts')
  const now = await import('./cordage.ts')
  const a: Subject = { ...(await old.cordageSubject(200, 1)), name: rev }
  const b: Subject = { ...(await now.cordageSubject(200, 1)), name: 'this tree' }
  const steps = numberArg('--steps', 50)
  const seconds = numberArg('--seconds', 6)
  console.log(`Cordage at ${rev} (old) against this tree (new), ${steps} steps, timed in turn`)
  for (let round = 1; round <= numberArg('--rounds', 3); round++) {
    const budget = { warmupMs: 1500, measureMs: seconds * 1000, minRuns: 50, maxRuns: 1_000_000 }
    const [x, y] = await measurePair(a, b, steps, budget)
    const ratio = (y.median / x.median).toFixed(3)
    console.log(
      `round ${round}: old ${x.median.toFixed(1)}, new ${y.median.toFixed(1)} µs/step (medians of ${x.runs} runs each); new / old ${ratio}`,
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
