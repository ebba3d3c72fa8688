/**
 * What a summary must keep: compaction is a lossy move of state into fewer tokens, so before a summary
 * replaces the older part of the projection, each item below must be present in it or retrievable from
 * it (its seq named, so the recall tool can fetch it). Items are read from run state, by the seq each
 * older message came from, not from the message text: a context provider may have clipped that text.
 */
import type { ActionState, ContextMessage, RunState, SafeRegex, TranscriptEntry } from 'cordage'
import { shorten } from './tokens.ts'

export type NeedKind = 'revision' | 'constraint' | 'permission' | 'fact' | 'failure' | 'commitment'

export interface Need {
  kind: NeedKind
  seq: number
  /** One line saying what it is, for the extractive summary and the model's checklist. */
  label: string
  /** The full text it came from. */
  text: string
  /** For a fact: the references it cites; naming one of them also covers it. */
  citations: string[]
}

/** From the preset, run over tool results and the model's text: on the linear-time engine (safeRegex). */
export interface NeedPatterns {
  citation: SafeRegex
  commitment: SafeRegex
}

export function needsOf(older: readonly ContextMessage[], state: Readonly<RunState>, patterns: NeedPatterns): Need[] {
  const bySeq = entriesOf(state.transcript, new Set(older.map((m) => m.source).filter((s) => s > 0)))
  const goalSeq = state.transcript.find((e) => e.kind === 'user')?.seq
  const needs: Need[] = []
  const push = (kind: NeedKind, seq: number, label: string, text: string, citations: string[] = []) =>
    needs.push({ kind, seq, label, text, citations })
  for (const message of older) {
    const entry = message.source > 0 ? bySeq.get(message.source) : undefined
    if (!entry) continue
    switch (entry.kind) {
      case 'user':
        if (entry.seq !== goalSeq) push('revision', entry.seq, `user said: "${shorten(entry.text, 160)}"`, entry.text)
        break
      case 'feedback':
        push('constraint', entry.seq, `harness: ${shorten(entry.text, 160)}`, entry.text)
        break
      case 'observation': {
        const action = state.actions[entry.actionId]
        const permission = action && permissionOf(action)
        if (permission) push('permission', entry.seq, `${callOf(action)} ${permission}`, entry.text)
        else if (!entry.ok) push('failure', entry.seq, `${callOf(action, entry.tool)} failed: ${shorten(entry.text, 160)}`, entry.text)
        const cites = entry.ok ? citationsIn(entry.text, patterns.citation) : []
        if (cites.length) push('fact', entry.seq, shorten(entry.text, 200), entry.text, cites)
        break
      }
      case 'assistant': {
        const d = entry.decision
        const text = d.kind === 'final' ? d.text : d.kind === 'ask_user' ? d.question : (d.text ?? '')
        if (text && patterns.commitment.test(text)) push('commitment', entry.seq, `the model said: "${shorten(text, 160)}"`, text)
        break
      }
    }
  }
  return needs
}

/**
 * The transcript entries with these seqs, looked for from the end: the older part a compaction reads is
 * recent in a long run (what aged since the last summary), so the search stops long before the start of
 * the transcript once every seq is found. A seq that is not there costs a read of the whole transcript.
 */
function entriesOf(transcript: readonly TranscriptEntry[], seqs: ReadonlySet<number>): Map<number, TranscriptEntry> {
  const found = new Map<number, TranscriptEntry>()
  for (let i = transcript.length - 1; i >= 0 && found.size < seqs.size; i--) {
    const entry = transcript[i]
    if (seqs.has(entry.seq)) found.set(entry.seq, entry)
  }
  return found
}

/** Approvals, rejections and denials: what the run was and was not allowed to do. */
function permissionOf(action: ActionState): string | undefined {
  if (action.approval) {
    const reason = action.approval.reason ? `: ${shorten(action.approval.reason, 120)}` : ''
    return action.approval.approved ? `was approved by ${action.approval.by}${reason}` : `was rejected by ${action.approval.by}${reason}`
  }
  if (action.decision?.verdict === 'deny')
    return `was denied by policy (rule ${action.decision.ruleId}): ${shorten(action.decision.reason, 120)}`
  return undefined
}

function callOf(action: ActionState | undefined, tool?: string): string {
  if (!action) return tool ?? 'a tool call'
  return `${action.tool}(${shorten(JSON.stringify(action.args) ?? '', 80)})`
}

/** The references a text cites, in order, once each (group 1 of the pattern, else the whole match). */
export function citationsIn(text: string, citation: SafeRegex): string[] {
  return [...new Set(Array.from(citation.matchAll(text), (m) => (m[1] ?? m[0]).trim()))]
}
