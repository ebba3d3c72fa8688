/**
 * The extractive summary: what must survive, copied out of the run as short bullets, each naming its seq.
 * Used when the model cannot be asked, fails, or writes a summary that misses something. It covers every
 * need by construction; to fit its budget it shortens the bullets step by step, down to bare references.
 */
import { EstimateCounter, type TokenCounter } from 'cordage'
import type { Need, NeedKind } from './needs.ts'
import { shorten } from './tokens.ts'

/** Each kind under its title; the short one is for the barest level. */
const Sections: { kind: NeedKind; title: string; short: string }[] = [
  { kind: 'revision', title: 'User input after the goal', short: 'User input' },
  { kind: 'constraint', title: 'Constraints from the harness', short: 'Constraints' },
  { kind: 'permission', title: 'Permissions (approvals, rejections, denials)', short: 'Permissions' },
  { kind: 'fact', title: 'Facts with their sources', short: 'Facts' },
  { kind: 'failure', title: 'Failed attempts (do not repeat them unchanged)', short: 'Failed' },
  { kind: 'commitment', title: 'Open commitments', short: 'Open commitments' },
]

/**
 * Bullet length, in characters, tried in turn until the summary fits; 0 keeps only the references, and
 * the last level also leaves out the list of other summarised seqs (they are not needs).
 */
const Detail = [240, 120, 60, 0, -1]

/**
 * @param summarised seqs the summary stands for; those no bullet names are listed for recall at the end
 * @param counter counts `budget`'s tokens: the agent model's counter, or the kit's estimate
 * @returns the summary text, or undefined when even bare references do not fit `budget` tokens
 */
export function extractiveSummary(
  needs: readonly Need[],
  summarised: readonly number[],
  budget: number,
  counter: TokenCounter = EstimateCounter,
): string | undefined {
  for (const detail of Detail) {
    const text = render(needs, summarised, detail)
    if (counter.count(text) <= budget) return text
  }
  return undefined
}

function render(needs: readonly Need[], summarised: readonly number[], detail: number): string {
  const lines: string[] = []
  const named = new Set<number>()
  for (const { kind, title, short } of Sections) {
    const ofKind = needs.filter((n) => n.kind === kind)
    if (!ofKind.length) continue
    for (const n of ofKind) named.add(n.seq)
    if (kind === 'fact') {
      // One entry per set of citations: a fact looked up five times is one fact with five seqs.
      const groups = new Map<string, Need[]>()
      for (const need of ofKind) {
        const key = need.citations.join(' ')
        groups.set(key, [...(groups.get(key) ?? []), need])
      }
      const entries = [...groups.values()].map((group) => {
        const text = detail > 0 ? ` ${shorten(group[0].text, detail)}` : ''
        const cites = group[0].citations
          .filter((c) => !text.includes(c))
          .map((c) => ` [source: ${c}]`)
          .join('')
        return `${refs(group.map((n) => n.seq))}:${text}${cites}`
      })
      lines.push(detail > 0 ? `${title}:\n${entries.map((e) => `- ${e}`).join('\n')}` : `${short}: ${entries.join('; ')}`)
      continue
    }
    // At its barest a section is one line of references.
    lines.push(
      detail > 0
        ? `${title}:\n${ofKind.map((n) => `- seq ${n.seq}: ${shorten(n.label, detail)}`).join('\n')}`
        : `${short}: ${refs(ofKind.map((n) => n.seq))}`,
    )
  }
  const rest = [...new Set(summarised)].filter((s) => !named.has(s)).sort((a, b) => a - b)
  if (rest.length && detail >= 0)
    lines.push(
      `Other summarised events (recall by seq): ${rest.length > 24 ? `${rest.length} events from seq ${rest[0]} to seq ${rest[rest.length - 1]}` : refs(rest)}`,
    )
  return lines.join('\n')
}

function refs(seqs: number[]): string {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b)
  return `${sorted.length === 1 ? 'seq' : 'seqs'} ${sorted.join(', ')}`
}
