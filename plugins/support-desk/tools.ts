/** The support desk's tools, each with its execution contract. */
import { z } from 'zod'
import { CordageError, defineTool, type Tool } from 'cordage'
import { Knowledge } from './knowledge.ts'
import type { Outbox } from './outbox.ts'

export const lookupPolicy: Tool = defineTool({
  name: 'lookup_policy',
  description: 'Look up the support policy on a topic. Returns the policy text and the source reference to cite.',
  input: z
    .object({
      topic: z
        .string()
        .min(1)
        .describe(`One of: ${Knowledge.map((k) => k.topic).join(', ')}`),
    })
    .strict(),
  sideEffect: 'none',
  idempotent: true,
  timeoutMs: 2000,
  run: ({ topic }) => {
    const entry = Knowledge.find((k) => k.topic === topic.toLowerCase().trim())
    if (!entry) throw new CordageError('tool_failed', `no policy on "${topic}"; known topics: ${Knowledge.map((k) => k.topic).join(', ')}`)
    return { output: entry, observation: `${entry.text} [source: ${entry.source}]` }
  },
})

export function recordFollowup(outbox: Outbox): Tool {
  return defineTool({
    name: 'record_followup',
    description: 'Record a follow-up note on a customer ticket in the ticketing system.',
    input: z.object({ ticketId: z.string().regex(/^T-\d+$/, 'ticket ids look like T-1234'), note: z.string().min(1).max(2000) }).strict(),
    sideEffect: 'external',
    idempotent: true,
    needsApproval: true,
    timeoutMs: 5000,
    // The record it would write, read-only: whoever approves the follow-up sees it first.
    preview: ({ ticketId, note }) => ({
      summary: `record a follow-up note of ${note.length} characters on ticket ${ticketId}`,
      record: { ticketId, note },
    }),
    run: ({ ticketId, note }, io) => {
      const { receipt, duplicate } = outbox.write(io.idempotencyKey, ticketId, note)
      return {
        output: { receipt, ticketId, duplicate },
        receipt,
        observation: `Follow-up ${receipt} recorded on ${ticketId}${duplicate ? ' (already recorded earlier)' : ''}.`,
      }
    },
  })
}

export function slowLookup(delayMs: number, timeoutMs: number): Tool {
  return defineTool({
    name: 'slow_lookup',
    description: 'Search the archive of old tickets. Slow.',
    input: z.object({ query: z.string().min(1) }).strict(),
    sideEffect: 'none',
    idempotent: true,
    timeoutMs,
    run: ({ query }, io) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve({ output: { query, matches: [] } }), delayMs)
        io.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            reject(io.signal.reason)
          },
          { once: true },
        )
      }),
  })
}
