/**
 * What the tests of a run's stored integrity share: a preset in a temp folder whose runs live in
 * store-sqlite or store-postgres (a fresh schema, dropped at the end), the real `cordage` binary run as
 * a child process, and SQL on the database behind the store's back, as someone with file or database
 * access would write it.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { tempDir } from '../helpers.ts'
import { cordageBin as bin } from '../bin.ts'

export type StoreKind = 'sqlite' | 'postgres'

const pgUrl = process.env.CORDAGE_PG_URL

/** Both stores; PostgreSQL is skipped only when no server is configured outside CI (where one always is). */
export const storeKinds: { kind: StoreKind; skip?: string }[] = [
  { kind: 'sqlite' },
  { kind: 'postgres', skip: pgUrl || process.env.CI ? undefined : 'CORDAGE_PG_URL is not set' },
]

export interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

let labs = 0

export class IntegrityLab {
  readonly dir = tempDir('cordage-integrity-')
  readonly presetFile = join(this.dir, 'preset.yml')
  readonly schema = `integrity_${process.pid}_${Date.now().toString(36)}_${labs++}`

  constructor(readonly kind: StoreKind) {}

  /** The store's plugin entry for this lab. */
  storeEntry(): unknown {
    if (this.kind === 'postgres') {
      if (!pgUrl) throw new Error('CORDAGE_PG_URL is not set: the PostgreSQL cases need a server')
      return { plugin: 'store-postgres', config: { url: pgUrl, schema: this.schema } }
    }
    return { plugin: 'store-sqlite', config: { path: 'runs.db' } }
  }

  writePreset(preset: unknown): void {
    writeFileSync(this.presetFile, stringify(preset))
  }

  /** `cordage <args> --preset <the lab's preset>`, to its end; `env` adds to (or, undefined, removes from) the environment. */
  cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Exit> {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
    delete childEnv.CORDAGE_LOG_KEY
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete childEnv[name]
      else childEnv[name] = value
    }
    const child = spawn(process.execPath, [bin, ...args, '--preset', this.presetFile], {
      cwd: this.dir,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    return new Promise((done, fail) => {
      child.on('error', fail)
      child.on('close', (code) => done({ code, stdout: stdout.trimEnd(), stderr: stderr.trimEnd() }))
    })
  }

  /** `cordage run --json ...`: the run's events and exit code. */
  async run(
    args: string[] = [],
    env: Record<string, string | undefined> = {},
  ): Promise<{ code: number | null; runId: string; events: RunEvent[]; stderr: string }> {
    const exit = await this.cli(['run', '--json', ...args], env)
    const events = exit.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as RunEvent)
    if (!events.length) throw new Error(`cordage run printed no events (exit ${exit.code}): ${exit.stderr}`)
    return { code: exit.code, runId: events[0].runId, events, stderr: exit.stderr }
  }

  /** SQL on the lab's database, with `?` placeholders (numbered for PostgreSQL), in the store's schema. */
  async sql(text: string, ...params: unknown[]): Promise<Record<string, unknown>[]> {
    if (this.kind === 'sqlite') {
      const db = new Database(join(this.dir, 'runs.db'))
      try {
        const statement = db.prepare(text)
        return statement.reader ? (statement.all(...params) as Record<string, unknown>[]) : (statement.run(...params), [])
      } finally {
        db.close()
      }
    }
    let n = 0
    const numbered = text.replace(/\?/g, () => `$${++n}`)
    const { default: pg } = await import('pg')
    const client = new pg.Client(pgUrl)
    await client.connect()
    try {
      await client.query(`SET search_path TO ${this.schema}`)
      return (await client.query(numbered, params)).rows
    } finally {
      await client.end()
    }
  }

  /** Drop the lab's PostgreSQL schema (the temp folder goes with the test process). */
  async close(): Promise<void> {
    if (this.kind !== 'postgres' || !pgUrl) return
    const { default: pg } = await import('pg')
    const client = new pg.Client(pgUrl)
    await client.connect()
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`)
    } finally {
      await client.end()
    }
  }
}

/** The vault-desk fixture's folder, for a preset's plugin entry. */
export const vaultDesk = resolve(import.meta.dirname, '../fixtures/plugins/vault-desk')
