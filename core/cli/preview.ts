/**
 * @module cli/preview
 * What a person deciding an approval is shown of the call: the preview recorded with the request
 * (core/kernel/preview.ts), as indented lines: the summary, the amount, the record as JSON, the diff
 * line by line (`+` green, `-` red when colour is on), or why there is none. Everything in it comes
 * from a tool, so untrusted: control characters are written out as text (cli/stream.ts `visible`).
 */
import type { ActionState } from '../contracts/state.ts'
import { visible } from './stream.ts'

/** Diff lines shown at most; the rest is counted (the whole diff is in the run's events). */
const MaxDiffLines = 200

/** @param events the command that prints the whole record (`cordage events RUN --json` with the preset), for a diff cut short */
export function formatPreview(
  action: Pick<ActionState, 'id' | 'tool' | 'preview' | 'dryRun'>,
  color = false,
  events = 'cordage events RUN --json',
): string[] {
  const tint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text)
  const lines: string[] = []
  if (action.dryRun) {
    lines.push(`  dry run: approving ${action.id} runs only ${visible(action.tool)}'s preview; nothing is changed`)
    return lines
  }
  const outcome = action.preview
  if (!outcome) return lines
  if (outcome.status === 'unavailable') return [`  no preview: the tool declares none`]
  // The guardrail changed what the tool said: the person sees that it did, and by which guard.
  const redacted = outcome.redacted ? ` (redacted by guardrail ${visible(outcome.redacted.guard)})` : ''
  if (outcome.status === 'failed')
    return [tint(33, `  preview failed: ${visible(outcome.code)} ${visible(flat(outcome.message))}${redacted}`)]
  const p = outcome.preview
  lines.push(`  preview: ${visible(flat(p.summary))}${redacted}`)
  if (p.amount) lines.push(`  amount: ${p.amount.value} ${visible(p.amount.currency)}`)
  if (p.record !== undefined) {
    lines.push('  record:')
    for (const line of JSON.stringify(p.record, null, 2).split('\n')) lines.push(`    ${visible(line)}`)
  }
  if (p.diff !== undefined) {
    lines.push('  diff:')
    const diff = p.diff.replace(/\n$/, '').split('\n')
    for (const line of diff.slice(0, MaxDiffLines)) {
      const shown = `    ${visible(line)}`
      const added = line.startsWith('+') && !line.startsWith('+++')
      const removed = line.startsWith('-') && !line.startsWith('---')
      lines.push(added ? tint(32, shown) : removed ? tint(31, shown) : line.startsWith('@@') ? tint(36, shown) : shown)
    }
    if (diff.length > MaxDiffLines) lines.push(`    … ${diff.length - MaxDiffLines} more lines (${events})`)
  }
  return lines
}

/** One line: a summary or message with newlines in it would pass for lines of its own. */
function flat(text: string): string {
  return text.replace(/\r?\n/g, ' ')
}
