/**
 * The system follow-ups are written to. It deduplicates by idempotency key the way a real ticketing API
 * would: the same key with the same note returns the first receipt; the same key with a different note
 * is refused. With a file, entries survive the process, so tests can count side effects from outside.
 */
import { appendFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { CordageError, hashArgs } from 'cordage'

export interface Followup {
  key: string
  ticketId: string
  note: string
  argsHash: string
  receipt: string
  at: number
}

export class Outbox {
  private memory: Followup[] = []

  constructor(private file?: string) {
    if (file) mkdirSync(dirname(file), { recursive: true })
  }

  entries(): Followup[] {
    if (!this.file) return [...this.memory]
    if (!existsSync(this.file)) return []
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Followup)
  }

  write(key: string, ticketId: string, note: string): { receipt: string; duplicate: boolean } {
    const argsHash = hashArgs({ ticketId, note })
    const existing = this.entries().find((e) => e.key === key)
    if (existing) {
      if (existing.argsHash !== argsHash)
        throw new CordageError('idempotency_conflict', `follow-up key ${key} was used for different content`)
      return { receipt: existing.receipt, duplicate: true }
    }
    const entry: Followup = { key, ticketId, note, argsHash, receipt: `FU-${this.entries().length + 1}`, at: Date.now() }
    if (this.file) appendFileSync(this.file, JSON.stringify(entry) + '\n')
    else this.memory.push(entry)
    return { receipt: entry.receipt, duplicate: false }
  }
}
