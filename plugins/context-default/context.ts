/**
 * The projection, in four sections and always in this order: the system prompt, the sources, the goal
 * (the first user message), the transcript. Every message carries its provenance: `source` is the seq of
 * the event it came from, `ref` names the file paragraph or note of a source. With a budget, the goal,
 * the recent window and calls still waiting for a result are pinned; the rest is clipped, then dropped,
 * by priority (see budget.ts), and a note after the goal says what was left out. Run state is only read:
 * whatever the projection leaves out is still in the state and the store.
 */
import {
  EstimateCounter,
  safeRegex,
  type AssembleInput,
  type ContextMessage,
  type ContextService,
  type Projection,
  type RunState,
  type SafeRegex,
  type TokenCounter,
} from 'cordage'
import { fit, type Candidate, type Fate } from './budget.ts'
import { ItemClasses, type Config, type ItemClass } from './manifest.ts'
import type { SourceItem } from './sources.ts'
import { messageTokens } from './tokens.ts'
import { classOf, shortened, TranscriptUnits, type Unit } from './units.ts'

export type ContextOptions = Omit<Config, 'sources' | 'cachedRuns'> & { cachedRuns?: number }

/** Provenance of the note that says what the budget left out. */
export const OmittedRef = 'context:omitted'

export class DefaultContext implements ContextService {
  private runs = new Map<string, TranscriptUnits>()
  private system: ContextMessage
  private sources: ContextMessage[]
  /** On the linear-time engine: the pattern comes from the preset and runs over tool results. */
  private citation: SafeRegex
  private shares: Partial<Record<ItemClass, number>> = {}

  constructor(
    private options: ContextOptions,
    sources: SourceItem[],
    private counter: () => TokenCounter = () => EstimateCounter,
  ) {
    this.system = { role: 'system', text: options.system, source: 0 }
    this.sources = sources.map((s) => ({ role: 'system', text: s.text, source: 0, ref: s.ref }))
    this.citation = safeRegex(options.citationPattern)
    for (const cls of ItemClasses) if (options.classes[cls].share !== undefined) this.shares[cls] = options.classes[cls].share
  }

  assemble({ state }: AssembleInput): Projection {
    const counter = this.counter()
    const count = (m: ContextMessage) => messageTokens(m, counter)
    const units = this.unitsOf(state, counter).units
    const goal = units.findIndex((u) => u.goal)
    const pinnedFrom = this.pinnedFrom(units, goal)

    const candidates: Candidate[] = []
    this.sources.forEach((m, i) =>
      candidates.push({ cls: 'sources', priority: this.priority('sources'), rank: -i, tokens: count(m), pinned: false }),
    )
    const unitAt: number[] = []
    units.forEach((unit, i) => {
      if (i === goal) return
      const cls = classOf(unit, (c) => this.priority(c))
      const short = i < pinnedFrom ? shortened(unit, this.options.clippedTokens, this.citation, counter) : null
      candidates.push({
        cls,
        priority: this.priority(cls),
        rank: i,
        tokens: unit.tokens,
        shortTokens: short?.tokens,
        pinned: i >= pinnedFrom || unit.open.size > 0,
      })
      unitAt.push(i)
    })

    const fixed = count(this.system) + (goal >= 0 ? units[goal].tokens : 0)
    const { fates, note } = this.fitWithNote(candidates, fixed, units, unitAt, count)

    const messages: ContextMessage[] = [this.system]
    this.sources.forEach((m, i) => {
      if (fates[i] !== 'dropped') messages.push(m)
    })
    // Earlier turns of a thread come before the goal, as they happened: the model reads the
    // conversation so far, then this turn's task. Without a thread the goal is the first unit.
    const before = goal < 0 ? 0 : unitAt.findIndex((u) => u > goal)
    const emit = (u: number, k: number) => {
      const fate = fates[this.sources.length + k]
      if (fate === 'full') messages.push(...units[u].messages)
      else if (fate === 'short') messages.push(...units[u].short!.messages)
    }
    const split = before < 0 ? unitAt.length : before
    unitAt.slice(0, split).forEach((u, k) => emit(u, k))
    if (goal >= 0) messages.push(...units[goal].messages)
    if (note) messages.push(note)
    unitAt.slice(split).forEach((u, k) => emit(u, split + k))
    return { messages, tokens: messages.reduce((n, m) => n + count(m), 0) }
  }

  forget(runId: string): void {
    this.runs.delete(runId)
  }

  private unitsOf(state: Readonly<RunState>, counter: TokenCounter): TranscriptUnits {
    let units = this.runs.get(state.runId)
    // Another counter (a swapped model, a calibration that moved) clips and counts the transcript anew.
    if (!units?.fits(state.transcript) || !units.counts(counter)) {
      units = new TranscriptUnits({ observationTokens: this.options.observationTokens, citation: this.citation, counter })
      this.runs.delete(state.runId)
      this.runs.set(state.runId, units)
      if (this.runs.size > (this.options.cachedRuns ?? 256)) this.runs.delete(this.runs.keys().next().value!)
    }
    units.update(state.transcript)
    return units
  }

  /** Index of the first unit of the recent window: the last `recent` units after the goal, at least the last one. */
  private pinnedFrom(units: Unit[], goal: number): number {
    let from = units.length
    for (let kept = 0; from > goal + 1 && (kept < this.options.recent || kept === 0); kept++) from--
    return from
  }

  private priority(cls: ItemClass): number {
    return this.options.classes[cls].priority
  }

  /** Fit the candidates, leaving room for the note about what was left out (its size depends on what is). */
  private fitWithNote(
    candidates: Candidate[],
    fixed: number,
    units: Unit[],
    unitAt: number[],
    count: (m: ContextMessage) => number,
  ): { fates: Fate[]; note?: ContextMessage } {
    let reserve = 0
    let fates: Fate[] = []
    let note: ContextMessage | undefined
    for (let pass = 0; pass < 4; pass++) {
      fates = fit(candidates, fixed + reserve, this.options.maxTokens, this.shares)
      note = omittedNote(fates, this.sources.length, units, unitAt)
      const needed = note ? count(note) : 0
      if (needed <= reserve) break
      reserve = needed
    }
    return { fates, note }
  }
}

/** What the budget left out, for the model: how many messages, between which seqs; undefined when nothing. */
function omittedNote(fates: Fate[], sourceCount: number, units: Unit[], unitAt: number[]): ContextMessage | undefined {
  const sources = fates.slice(0, sourceCount).filter((f) => f === 'dropped').length
  let messages = 0
  let first = Infinity
  let last = 0
  unitAt.forEach((u, k) => {
    if (fates[sourceCount + k] !== 'dropped') return
    for (const m of units[u].messages) {
      messages++
      if (m.source > 0) {
        first = Math.min(first, m.source)
        last = Math.max(last, m.source)
      }
    }
  })
  if (!sources && !messages) return undefined
  const parts: string[] = []
  if (messages) parts.push(`${messages} earlier message${messages === 1 ? '' : 's'}${last ? ` between seq ${first} and seq ${last}` : ''}`)
  if (sources) parts.push(`${sources} source paragraph${sources === 1 ? '' : 's'}`)
  // A user message rather than a system one: some providers accept system messages only at the start.
  return {
    role: 'user',
    text: `[context] Left out to fit the context budget: ${parts.join(' and ')}. The run log keeps all of them.`,
    source: 0,
    ref: OmittedRef,
  }
}
