/** Standing grants in the SQLite database (store contract 2.1.0): one row per grant, the grant as JSON. */
import type Database from 'better-sqlite3'
import { CordageError, matchesQuery, type ApprovalGrant, type ApprovalGrantQuery } from 'cordage'

export class SqliteGrants {
  private insert: Database.Statement
  private byAgent: Database.Statement
  private all: Database.Statement
  private one: Database.Statement
  private update: Database.Statement

  constructor(private db: Database.Database) {
    this.insert = db.prepare('INSERT INTO grants (id, agent, tool, created_at, body) VALUES (?, ?, ?, ?, ?)')
    this.byAgent = db.prepare('SELECT body FROM grants WHERE agent = ? ORDER BY created_at, id')
    this.all = db.prepare('SELECT body FROM grants ORDER BY created_at, id')
    this.one = db.prepare('SELECT body FROM grants WHERE id = ?')
    this.update = db.prepare('UPDATE grants SET body = ? WHERE id = ?')
  }

  put(grant: ApprovalGrant): void {
    try {
      this.insert.run(grant.id, grant.agent, grant.tool, grant.createdAt, JSON.stringify(grant))
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new CordageError('invalid_input', `grant ${grant.id} exists already`)
      throw error
    }
  }

  list(query: ApprovalGrantQuery): ApprovalGrant[] {
    const rows = (query.agent !== undefined ? this.byAgent.all(query.agent) : this.all.all()) as { body: string }[]
    return rows.map((r) => JSON.parse(r.body) as ApprovalGrant).filter((g) => matchesQuery(g, query))
  }

  /** In one transaction, so two revokes cannot both think they were first. */
  revoke(id: string, by: string, at: number, reason?: string): ApprovalGrant | undefined {
    return this.db
      .transaction(() => {
        const row = this.one.get(id) as { body: string } | undefined
        if (!row) return undefined
        const grant = JSON.parse(row.body) as ApprovalGrant
        if (grant.revokedAt !== undefined) return grant
        Object.assign(grant, { revokedAt: at, revokedBy: by, revokeReason: reason })
        this.update.run(JSON.stringify(grant), id)
        return grant
      })
      .immediate()
  }
}
