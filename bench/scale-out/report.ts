/** The bench's printout: one line per worker count with ratios to one worker, the statements per run, the proofs. */
import { commits, type Measurement } from './measure.ts'
import type { Statement } from './statements.ts'

/** Nearest-rank quantile. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-')
const x = (n: number, base: number) => (base > 0 ? `${(n / base).toFixed(2)}x` : '-')
const pad = (cells: string[], widths: number[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')

export function figures(list: Measurement[]): string[] {
  const base = list[0]
  const head = [
    'workers',
    'runs/s',
    'ratio',
    'claim p50 ms',
    'p99 ms',
    'p50 ratio',
    'renewals/s',
    'ratio',
    'claim stmt p50/p99 ms',
    'conns',
  ]
  const widths = head.map((h) => Math.max(h.length, 7))
  const lines = [pad(head, widths)]
  for (const m of list) {
    lines.push(
      pad(
        [
          String(m.plan.workers),
          f(m.drain.rate),
          x(m.drain.rate, base.drain.rate),
          f(quantile(m.claimLatency, 0.5), 0),
          f(quantile(m.claimLatency, 0.99), 0),
          x(quantile(m.claimLatency, 0.5), quantile(base.claimLatency, 0.5)),
          f(m.renewalsPerSecond, 2),
          x(m.renewalsPerSecond, base.renewalsPerSecond),
          `${f(quantile(m.claimStatementMs, 0.5), 2)} / ${f(quantile(m.claimStatementMs, 0.99), 2)}`,
          String(m.connections),
        ],
        widths,
      ),
    )
  }
  return lines
}

export function details(list: Measurement[]): string[] {
  return list.map((m) => {
    const perWorker = m.results.map((r) => r.ended.length)
    const window = (m.drain.to - m.drain.from) / 1000
    return `  ${m.plan.workers} worker(s): drained ${m.backlog.length} runs in ${f(window, 2)} s (runs per worker ${Math.min(...perWorker)}–${Math.max(...perWorker)}); claim latency over ${m.claimLatency.length} arrivals (${f(m.arrivalRate, 2)}/s); idle polls ${f(m.idlePolls, 2)}/s per worker; ${f(m.events.perRun)} events of ${f(m.events.bytes, 0)} B per run; WAL syncs (whole server) ${m.wal.syncs} for ${m.wal.commits} commits of ours`
  })
}

/**
 * Mean statements per run by kind, one column per worker count, and the median round trip of each kind
 * at the first count (the least contended). Empty claims (idle polls) are per second, not per run.
 */
export function statementTable(list: Measurement[]): string[] {
  const times = new Map<string, number[]>()
  for (const [prefix, statements] of [
    ['submit  ', list[0].submitStatements],
    ['worker  ', list[0].workerStatements],
  ] as const)
    for (const s of statements) times.set(`${prefix}${s.kind}`, [...(times.get(`${prefix}${s.kind}`) ?? []), s.ms])
  const perRun = list.map((m) => {
    const runs = m.backlog.length + m.arrivals.length
    const counts = new Map<string, number>()
    const add = (s: Statement, prefix: string) => {
      if (s.kind === 'migrate' || (s.kind === 'claimNext' && s.rows === 0)) return
      const key = `${prefix}${s.kind}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    for (const s of m.submitStatements) add(s, 'submit  ')
    for (const s of m.workerStatements) add(s, 'worker  ')
    const all = [...m.submitStatements, ...m.workerStatements].filter((s) => s.kind !== 'migrate')
    counts.set(
      '= statements',
      [...counts.values()].reduce((a, b) => a + b, 0),
    )
    counts.set('= commits (WAL flushes)', all.filter(commits).length)
    counts.set(
      '= DB time, ms (client round trips)',
      Math.round(all.filter((s) => !(s.kind === 'claimNext' && s.rows === 0)).reduce((a, s) => a + s.ms, 0)),
    )
    return new Map([...counts].map(([k, v]) => [k, v / runs]))
  })
  const keys = [...new Set(perRun.flatMap((m) => [...m.keys()]))].sort((a, b) => order(a) - order(b) || a.localeCompare(b))
  const widths = [Math.max(...keys.map((k) => k.length)), ...list.map(() => 7), 14]
  const median = (k: string) => (times.has(k) ? f(quantile(times.get(k)!, 0.5), 2) : '')
  return [
    pad(['per run', ...list.map((m) => `${m.plan.workers}w`), `p50 ms at ${list[0].plan.workers}w`], widths),
    ...keys.map((k) => pad([k, ...perRun.map((m) => f(m.get(k) ?? 0, 2)), median(k)], widths)),
  ]
}

function order(key: string): number {
  if (key.startsWith('=')) return 2
  return key.startsWith('submit') ? 0 : 1
}

export function proofLines(list: Measurement[]): { lines: string[]; failed: number } {
  const names = [...new Set(list.flatMap((m) => m.proofs.map((p) => p.name)))]
  let failed = 0
  const lines = names.map((name) => {
    const bad = list.flatMap((m) => m.proofs.filter((p) => p.name === name && !p.ok).map((p) => `${m.plan.workers}w: ${p.detail}`))
    failed += bad.length
    return `  ${bad.length ? 'FAIL' : 'ok  '} ${name}${bad.length ? `\n         ${bad.join('\n         ')}` : ''}`
  })
  return { lines, failed }
}
