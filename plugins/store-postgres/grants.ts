/** Standing grants in PostgreSQL (store contract 2.1.0): one row per grant, the grant as JSON. */
import type pg from 'pg'
import { CordageError, matchesQuery, type ApprovalGrant, type ApprovalGrantQuery } from 'cordage'

type Tx = <T>(body: (c: pg.PoolClient) => Promise<T>) => Promise<T>
type Query = (sql: string, params: unknown[]) => Promise<{ rows: any[] }>

/** Given the store's own query and transaction helpers, which wait for the schema to be migrated. */
export class PostgresGrants {
  constructor(
    private query: Query,
    private tx: Tx,
  ) {}

  async put(grant: ApprovalGrant): Promise<void> {
    try {
      await this.query('INSERT INTO grants (id, agent, tool, created_at, body) VALUES ($1, $2, $3, $4, $5)', [
        grant.id,
        grant.agent,
        grant.tool,
        grant.createdAt,
        JSON.stringify(grant),
      ])
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new CordageError('invalid_input', `grant ${grant.id} exists already`)
      throw error
    }
  }

  async list(query: ApprovalGrantQuery): Promise<ApprovalGrant[]> {
    const { rows } =
      query.agent !== undefined
        ? await this.query('SELECT body FROM grants WHERE agent = $1 ORDER BY created_at, id', [query.agent])
        : await this.query('SELECT body FROM grants ORDER BY created_at, id', [])
    return rows.map((r: { body: string }) => JSON.parse(r.body) as ApprovalGrant).filter((g) => matchesQuery(g, query))
  }

  /** The row is locked while it changes, so two revokes cannot both think they were first. */
  async revoke(id: string, by: string, at: number, reason?: string): Promise<ApprovalGrant | undefined> {
    return this.tx(async (c) => {
      const row = (await c.query('SELECT body FROM grants WHERE id = $1 FOR UPDATE', [id])).rows[0] as { body: string } | undefined
      if (!row) return undefined
      const grant = JSON.parse(row.body) as ApprovalGrant
      if (grant.revokedAt !== undefined) return grant
      Object.assign(grant, { revokedAt: at, revokedBy: by, revokeReason: reason })
      await c.query('UPDATE grants SET body = $1 WHERE id = $2', [JSON.stringify(grant), id])
      return grant
    })
  }
}
