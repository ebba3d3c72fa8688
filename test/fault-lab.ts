/**
 * Crash tests with real processes: a preset in a temporary folder (store-sqlite, the fault-desk tools),
 * the real `cordage` binary run as child processes, and readers for what they left behind: the events
 * in the database and the payments in the payment system's file.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import Database from 'better-sqlite3'
import { meteredBudgets, type RunEvent } from 'cordage'
import { SqliteStore } from '../plugins/store-sqlite/sqlite-store.ts'
import { PostgresStore } from '../plugins/store-postgres/postgres-store.ts'
import { Payments, type Payment } from './fixtures/plugins/fault-desk/payments.ts'
import { tempDir } from './helpers.ts'
import { cordageBin as bin, fixturePlugin } from './bin.ts'

export interface LabOptions {
  script: unknown[]
  rules?: unknown[]
  budgets?: Record<string, number>
  durability?: Record<string, number>
  desk?: Record<string, unknown>
  model?: Record<string, unknown>
  /** Replace the policy plugin entry (for the version drift test). */
  policy?: unknown
  /** Where runs live: SQLite (default) or PostgreSQL (CORDAGE_PG_URL, a fresh schema per lab). */
  store?: 'sqlite' | 'postgres'
  /** More plugin entries for the `pay` agent, after fault-desk (a fixture, subagents). */
  plugins?: unknown[]
  /** Agents the `pay` agent may start as children (the preset's `spawns`). */
  spawns?: string[]
  /** More agents in the preset, after `pay` (which stays the default agent); given whole, as in a preset. */
  agents?: Record<string, unknown>
}

/** The stores multi-worker tests run against: PostgreSQL too when a server is there (always in CI). */
export const sharedStores: ('sqlite' | 'postgres')[] = process.env.CORDAGE_PG_URL || process.env.CI ? ['sqlite', 'postgres'] : ['sqlite']
let labs = 0

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** stdout parsed as JSON lines (commands run with --json). */
  events: RunEvent[]
}

export class FaultLab {
  readonly dir = tempDir('cordage-fault-')
  readonly presetFile = join(this.dir, 'preset.yml')
  readonly schema = `lab_${process.pid}_${Date.now().toString(36)}_${labs++}`
  private store?: SqliteStore | PostgresStore
  private readonly children = new Set<ChildProcess>()

  constructor(readonly options: LabOptions) {
    this.write(options)
  }

  write(options: LabOptions): void {
    writeFileSync(
      this.presetFile,
      stringify({
        cordage: 1,
        agents: {
          pay: {
            task: 'pay the invoice',
            budgets: { maxSteps: 20, ...options.budgets },
            ...(options.spawns ? { spawns: options.spawns } : {}),
            retry: { attempts: 2, backoffMs: 1 },
            durability: { leaseTtlMs: 300, cancelWatchMs: 25, cancelGraceMs: 1500, effectWaitMs: 3000, ...options.durability },
            model: { plugin: 'model-scripted', config: { script: options.script, ...options.model } },
            plugins: [
              options.store === 'postgres'
                ? { plugin: 'store-postgres', config: { url: pgUrl(), schema: this.schema } }
                : { plugin: 'store-sqlite', config: { path: 'runs.db' } },
              'tools-registry',
              'context-basic',
              { plugin: 'verifier-basic', config: { minCount: 0 } },
              options.policy ?? { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'allow', rules: options.rules ?? [] } },
              {
                // Compiled to JavaScript under test/run.ts: it is in every process these tests start.
                path: fixturePlugin('fault-desk'),
                config: { payments: 'payments.jsonl', ...options.desk },
              },
              'threads',
              // Token and cost budgets (of `pay`, carried to its children too) need the meter.
              ...(meteredBudgets(options.budgets).length ? ['budgets'] : []),
              ...(options.plugins ?? []),
            ],
          },
          ...options.agents,
        },
      }),
    )
  }

  /** Start `cordage <args> --preset <lab preset>`; `fault` sets CORDAGE_FAULT. */
  spawn(args: string[], fault?: string): { child: ChildProcess; exit: Promise<Exit>; lines: (n: number) => Promise<RunEvent[]> } {
    const child = spawn(process.execPath, [bin, ...args, '--preset', this.presetFile], {
      env: { ...process.env, NO_COLOR: '1', CORDAGE_FAULT: fault ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.children.add(child)
    child.on('exit', () => this.children.delete(child))
    let stdout = ''
    let stderr = ''
    const waiters: (() => void)[] = []
    child.stdout!.on('data', (d) => {
      stdout += d
      for (const w of waiters.splice(0)) w()
    })
    child.stderr!.on('data', (d) => {
      stderr += d
    })
    const exit = new Promise<Exit>((done) =>
      child.on('close', (code, signal) => {
        for (const w of waiters.splice(0)) w()
        done({ code, signal, stdout, stderr, events: parseLines(stdout) })
      }),
    )
    let closed = false
    void exit.then(() => {
      closed = true
    })
    const lines = async (n: number) => {
      while (parseLines(stdout).length < n && !closed) await new Promise<void>((r) => waiters.push(r))
      return parseLines(stdout)
    }
    return { child, exit, lines }
  }

  /** Run `cordage <args>` to the end. */
  run(args: string[], fault?: string): Promise<Exit> {
    return this.spawn(args, fault).exit
  }

  db(): SqliteStore | PostgresStore {
    return (this.store ??=
      this.options.store === 'postgres'
        ? new PostgresStore(pgUrl(), this.schema, 2, 500)
        : new SqliteStore(join(this.dir, 'runs.db'), { synchronous: 'normal', snapshotEvery: 500, busyTimeoutMs: 5000 }))
  }

  events(runId: string): Promise<RunEvent[]> {
    return this.db().load(runId)
  }

  payments(): Payment[] {
    return new Payments(join(this.dir, 'payments.jsonl')).all()
  }

  /**
   * End a dead worker's lease now, as its expiry would (a test that first checks the run is still owned
   * uses a long lease, so a slow machine cannot let it lapse before the check).
   */
  async expireLease(runId: string): Promise<void> {
    if (this.options.store === 'postgres') {
      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: pgUrl() })
      await client.connect()
      try {
        await client.query(`UPDATE ${this.schema}.runs SET lease_expires = 0 WHERE run_id = $1`, [runId])
      } finally {
        await client.end()
      }
      return
    }
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(join(this.dir, 'runs.db'))
    try {
      db.prepare('UPDATE runs SET lease_expires = 0 WHERE run_id = ?').run(runId)
    } finally {
      db.close()
    }
  }

  /**
   * Freeze a worker with SIGSTOP, between two of its SQLite transactions: a process frozen inside one
   * holds the database's write lock for as long as it is frozen, which no lease or fence can take back
   * (SQLite has no lock timeout of its own), so the test would measure the machine's timing, not fencing.
   */
  async freeze(child: ChildProcess): Promise<void> {
    for (let tries = 0; ; tries++) {
      child.kill('SIGSTOP')
      if (this.options.store === 'postgres' || !this.writeLocked() || tries >= 200) return
      child.kill('SIGCONT')
      await new Promise((r) => setTimeout(r, 5))
    }
  }

  private writeLocked(): boolean {
    const db = new Database(join(this.dir, 'runs.db'), { timeout: 0 })
    try {
      db.exec('BEGIN IMMEDIATE')
      db.exec('ROLLBACK')
      return false
    } catch {
      return true
    } finally {
      db.close()
    }
  }

  /** Wait out a dead worker's lease so another process may take its run over. */
  leaseExpiry(): Promise<void> {
    return new Promise((r) => setTimeout(r, (this.options.durability?.leaseTtlMs ?? 300) + 100))
  }

  close(): void {
    // A test that failed half-way may leave a worker running, or frozen by SIGSTOP: one left behind keeps
    // the test file from ending (its pipes stay open) and may hold the database's lock.
    for (const child of this.children) child.kill('SIGKILL')
    this.children.clear()
    const store = this.store
    if (store instanceof PostgresStore) void store.dropSchema().finally(() => store.close())
    else store?.close()
  }
}

function pgUrl(): string {
  const url = process.env.CORDAGE_PG_URL
  if (!url) throw new Error('CORDAGE_PG_URL is not set: the PostgreSQL tests need a server (bash .ci/run starts one)')
  return url
}

function parseLines(text: string): RunEvent[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
}

/** seq 1..n without gaps, one run/end at most and last. */
export function wellFormed(events: RunEvent[]): string | undefined {
  for (const [i, e] of events.entries()) if (e.seq !== i + 1) return `seq ${e.seq} at position ${i + 1}`
  const ends = events.filter((e) => e.type === 'run/end').length
  if (ends > 1) return `${ends} run/end events`
  if (ends === 1 && events.at(-1)!.type !== 'run/end') return 'run/end is not last'
  return undefined
}
