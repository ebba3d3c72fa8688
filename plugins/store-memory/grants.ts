/** Standing grants in process memory (store contract 2.1.0). */
import { CordageError, matchesQuery, type ApprovalGrant, type ApprovalGrantQuery } from 'cordage'

export class MemoryGrants {
  private byId = new Map<string, ApprovalGrant>()

  async put(grant: ApprovalGrant): Promise<void> {
    if (this.byId.has(grant.id)) throw new CordageError('invalid_input', `grant ${grant.id} exists already`)
    this.byId.set(grant.id, structuredClone(grant))
  }

  async list(query: ApprovalGrantQuery): Promise<ApprovalGrant[]> {
    return [...this.byId.values()]
      .filter((g) => matchesQuery(g, query))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((g) => structuredClone(g))
  }

  async revoke(id: string, by: string, at: number, reason?: string): Promise<ApprovalGrant | undefined> {
    const grant = this.byId.get(id)
    if (!grant) return undefined
    if (grant.revokedAt === undefined) Object.assign(grant, { revokedAt: at, revokedBy: by, revokeReason: reason })
    return structuredClone(grant)
  }
}
