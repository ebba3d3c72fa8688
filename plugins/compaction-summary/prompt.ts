/**
 * The summary request: instructions, the older part of the run as numbered lines (each with its seq),
 * the previous summary when this one extends it, and a checklist of what must be named. The checklist
 * is what the coverage check will look for, so a model that follows it passes.
 */
import type { ContextMessage } from 'cordage'
import type { Need } from './needs.ts'
import { shorten } from './tokens.ts'

const Instructions = [
  'You condense the earlier part of an agent run so that the agent can continue the same task with less context.',
  'Write plain text, no preamble. Keep, in this order: what the user asked for and every later change to it; constraints and',
  'permissions (what was denied, approved or rejected, and why); facts that were found, each with its citation copied exactly',
  '(for example [source: policy/refunds#2]); attempts that failed and why; what the agent still has to do.',
  'Name the events you rely on by their seq, written as "seq 12": the agent can fetch any of them again by that number.',
  'Do not invent facts, citations or seqs.',
].join(' ')

export interface PromptInput {
  older: readonly ContextMessage[]
  needs: readonly Need[]
  /** The summary this one extends: it already covers the seqs before `older`. */
  previous?: string
  maxTokens: number
}

export function summaryPrompt({ older, needs, previous, maxTokens }: PromptInput): ContextMessage[] {
  const lines = older.map(line)
  const parts = [
    previous ? `The summary so far:\n${previous}\n\nWhat happened after it:` : 'The earlier part of the run:',
    lines.join('\n'),
  ]
  if (needs.length) {
    parts.push(
      `Your summary must name each of these by its seq (or, for a fact, copy its citation):\n${needs.map((n) => `- seq ${n.seq} (${n.kind}): ${n.label}`).join('\n')}`,
    )
  }
  parts.push(`Write at most ${Math.max(20, Math.floor(maxTokens * 0.7))} words.`)
  return [
    { role: 'system', text: Instructions, source: 0 },
    { role: 'user', text: parts.join('\n\n'), source: 0 },
  ]
}

/** One older message as a line the model can refer to by seq. */
function line(m: ContextMessage): string {
  const at = m.source > 0 ? `[seq ${m.source}]` : '[note]'
  if (m.role === 'assistant') {
    const calls = (m.calls ?? []).map((c) => `${c.name}(${shorten(JSON.stringify(c.args) ?? '', 200)}) as ${c.actionId}`)
    const said = m.text ? ` said: ${shorten(m.text, 600)}` : ''
    return `${at} assistant${said}${calls.length ? ` called ${calls.join(', ')}` : ''}`
  }
  if (m.role === 'tool') return `${at} result of ${m.actionId}: ${shorten(m.text, 600)}`
  return `${at} ${m.role}: ${shorten(m.text, 600)}`
}
