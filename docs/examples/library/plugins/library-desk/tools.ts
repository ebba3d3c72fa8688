import { z } from 'zod'
import { CordageError, defineTool } from 'cordage'
import type { Config } from './manifest.ts'

export function findLoan(loans: Config['loans']) {
  return defineTool({
    name: 'find_loan',
    description: 'Look up a loan by book id: the title and the day it is due back.',
    input: z.object({ bookId: z.string().regex(/^B-\d+$/, 'book ids look like B-12') }),
    sideEffect: 'none',
    run: ({ bookId }) => {
      const loan = loans[bookId]
      if (!loan) throw new CordageError('tool_failed', `no loan for ${bookId}`)
      return { output: { bookId, ...loan } }
    },
  })
}

export function renewLoan(loans: Config['loans']) {
  return defineTool({
    name: 'renew_loan',
    description: 'Renew a loan by a number of weeks; returns the new due date.',
    input: z.object({ bookId: z.string(), weeks: z.number().int().min(1).max(8) }),
    sideEffect: 'local',
    idempotent: true,
    run: ({ bookId, weeks }) => {
      const loan = loans[bookId]
      if (!loan) throw new CordageError('tool_failed', `no loan for ${bookId}`)
      // Computed from the configured due date, not from the loan as changed: renewing twice with the
      // same arguments (a retry) gives the same date.
      const due = addWeeks(loan.due, weeks)
      return { output: { bookId, due }, observation: `Renewed ${bookId} (${loan.title}): due ${due}` }
    },
  })
}

function addWeeks(day: string, weeks: number): string {
  const date = new Date(`${day}T00:00:00Z`)
  date.setUTCDate(date.getUTCDate() + 7 * weeks)
  return date.toISOString().slice(0, 10)
}
