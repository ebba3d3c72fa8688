/**
 * Line coverage per layer, from c8's json-summary (coverage/coverage-summary.json), printed after
 * `npm test`; fails when the kernel's line coverage falls below its floor.
 *
 * Layers (docs/concepts/architecture.md): kernel (core/kernel/, core/index.ts), kit (core/kit/), contracts
 * (core/contracts/), host (core/host/), cli (core/cli/),
 * wire (core/wire/), plugins (plugins/, their test/ folders aside), playground (playground/).
 *
 * `node --import tsx test/coverage/layers.ts [summary.json] [--floor N]`; the floor is KernelFloor
 * below, or CORDAGE_KERNEL_COVERAGE_FLOOR. docs/guides/testing.md says how it was set.
 */
import { readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

/**
 * Measured when the floor was set (2026-12-01, the whole suite): kernel lines 97.0% (5971/6157). The
 * floor leaves two points for what timing moves between runs (crash tests, races), and fails a
 * change that adds untested kernel code in earnest.
 */
export const KernelFloor = 95

interface Counts {
  total: number
  covered: number
}
type Summary = Record<string, { lines: Counts; statements: Counts; branches: Counts; functions: Counts }>

const Layers: [string, (path: string) => boolean][] = [
  ['kernel', (p) => p.startsWith('core/kernel/') || p === 'core/index.ts'],
  ['kit', (p) => p.startsWith('core/kit/')],
  ['contracts', (p) => p.startsWith('core/contracts/')],
  ['host', (p) => p.startsWith('core/host/')],
  ['cli', (p) => p.startsWith('core/cli/')],
  ['wire', (p) => p.startsWith('core/wire/')],
  ['plugins', (p) => p.startsWith('plugins/') && !/^plugins\/[^/]+\/test\//.test(p) && !/\.test\.ts$/.test(p)],
  ['playground', (p) => p.startsWith('playground/')],
]

export function byLayer(summary: Summary, root: string) {
  const rows = Layers.map(([name]) => ({
    name,
    files: 0,
    lines: { total: 0, covered: 0 },
    branches: { total: 0, covered: 0 },
    functions: { total: 0, covered: 0 },
  }))
  for (const [file, counts] of Object.entries(summary)) {
    if (file === 'total') continue
    const path = relative(root, file).split('\\').join('/')
    const at = Layers.findIndex(([, test]) => test(path))
    if (at < 0) continue
    const row = rows[at]
    row.files++
    for (const kind of ['lines', 'branches', 'functions'] as const) {
      row[kind].total += counts[kind].total
      row[kind].covered += counts[kind].covered
    }
  }
  return rows
}

const pct = (c: Counts) => (c.total ? (100 * c.covered) / c.total : 100)

function main(): void {
  const args = process.argv.slice(2)
  const floorAt = args.indexOf('--floor')
  const floor = floorAt >= 0 ? Number(args[floorAt + 1]) : Number(process.env.CORDAGE_KERNEL_COVERAGE_FLOOR ?? KernelFloor)
  const file = args.find((a, i) => !a.startsWith('--') && (floorAt < 0 || i !== floorAt + 1)) ?? 'coverage/coverage-summary.json'
  const summary = JSON.parse(readFileSync(file, 'utf8')) as Summary
  const rows = byLayer(summary, resolve('.'))
  const header = ['layer', 'files', 'lines', 'branches', 'functions']
  const show = (files: number, text: string) => (files ? text : '-')
  const table = [
    header,
    ...rows.map((r) => [
      r.name,
      String(r.files),
      show(r.files, `${pct(r.lines).toFixed(1)}% (${r.lines.covered}/${r.lines.total})`),
      show(r.files, `${pct(r.branches).toFixed(1)}%`),
      show(r.files, `${pct(r.functions).toFixed(1)}%`),
    ]),
  ]
  const widths = header.map((_, i) => Math.max(...table.map((l) => l[i].length)))
  console.log(
    `\ncoverage by layer (c8, ${process.env.CORDAGE_TEST_CHILD_COVERAGE ? 'every process the tests started' : "the test files' own processes"})`,
  )
  for (const line of table) console.log(line.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '))
  const kernel = rows.find((r) => r.name === 'kernel')!
  if (!kernel.files) {
    console.error(`coverage: no kernel file in ${file}; was the suite run under c8?`)
    process.exitCode = 1
  } else if (pct(kernel.lines) < floor) {
    console.error(
      `coverage: kernel line coverage ${pct(kernel.lines).toFixed(1)}% is below its floor of ${floor}% (test/coverage/layers.ts): add tests for the lines you added, or see docs/guides/testing.md`,
    )
    process.exitCode = 1
  } else {
    console.log(`kernel line coverage ${pct(kernel.lines).toFixed(1)}%, floor ${floor}%`)
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('layers.ts')) main()
