import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Loan {
  title: string
  /** The day the book is due back: 2025-07-01. */
  due: string
}

export interface Config {
  /** The loans the desk knows, by book id. */
  loans: Record<string, Loan>
}

export default {
  name: 'library-desk',
  version: '1.0.0',
  description: 'Library loans: look a loan up, renew it, verify that an answer states the new due date.',
  requires: { tools: '^1.0.0' },
  provides: { verifier: '1.0.0' },
  config: Schema.object({
    loans: Schema.dict(Schema.object({
      title: Schema.string().required(),
      due: Schema.string().pattern(/^\d{4}-\d{2}-\d{2}$/).required(),
    })).default({}).description('Loans by book id.'),
  }),
} satisfies Manifest
