/**
 * The transcript as units: the budget keeps or drops whole units, so a tool call can never lose its
 * result. A unit is one message, or a model turn with tool calls together with the results of those
 * calls. Units are built incrementally (the transcript only grows) and stay contiguous: if a result
 * ever arrives after other entries, the units in between are merged into its call's unit.
 */
import type { ContextMessage, ObservationEntry, SafeRegex, TranscriptEntry } from 'cordage'
import type { ItemClass } from './manifest.ts'
import { resultText, toMessage, type RenderOptions } from './render.ts'
import { messageTokens } from './tokens.ts'

export interface Unit {
  messages: ContextMessage[]
  /** Each tool result as recorded, by actionId: clipping under pressure starts from the original. */
  results: Map<string, ObservationEntry>
  tokens: number
  /** The first user message of the run's own turn (not one of an earlier turn of its thread). */
  goal: boolean
  /** Calls of this unit that have no result yet. */
  open: Set<string>
  has: { input: boolean; feedback: boolean; failure: boolean; calls: boolean; answer: boolean }
  /** The unit with its tool results clipped to the pressure size; worked out when first needed. */
  short?: { messages: ContextMessage[]; tokens: number } | null
}

export class TranscriptUnits {
  readonly units: Unit[] = []
  /** Transcript entries taken in so far, and the seq of the last one (to notice a different transcript). */
  entries = 0
  lastSeq = 0
  private byAction = new Map<string, Unit>()
  private goalSeen = false

  private readonly revision: number | undefined

  constructor(private options: RenderOptions) {
    this.revision = options.counter.revision
  }

  /** Whether this cache was built from the start of `transcript`. */
  fits(transcript: readonly TranscriptEntry[]): boolean {
    return transcript.length >= this.entries && (this.entries === 0 || transcript[this.entries - 1].seq === this.lastSeq)
  }

  update(transcript: readonly TranscriptEntry[]): void {
    for (let i = this.entries; i < transcript.length; i++) this.add(transcript[i])
    this.entries = transcript.length
    this.lastSeq = transcript.length ? transcript[transcript.length - 1].seq : 0
  }

  private add(entry: TranscriptEntry): void {
    const message = toMessage(entry, this.options)
    if (entry.kind === 'observation') {
      const owner = this.byAction.get(entry.actionId)
      if (owner) {
        const at = this.units.indexOf(owner)
        // Keep units contiguous: whatever landed between the call and its result joins the call's unit.
        for (const later of this.units.splice(at + 1)) this.absorb(owner, later)
        this.push(owner, message)
        owner.results.set(entry.actionId, entry)
        owner.open.delete(entry.actionId)
        if (!entry.ok) owner.has.failure = true
        return
      }
    }
    const unit: Unit = {
      messages: [],
      results: new Map(),
      tokens: 0,
      goal: false,
      open: new Set(),
      has: { input: false, feedback: false, failure: false, calls: false, answer: false },
    }
    if (entry.kind === 'user' && entry.turn !== undefined) {
      // A message of an earlier turn of the thread (thread/history): context for this turn, not its goal.
      unit.has.input = true
    } else if (entry.kind === 'user') {
      unit.goal = !this.goalSeen
      unit.has.input = this.goalSeen
      this.goalSeen = true
    } else if (entry.kind === 'feedback') {
      unit.has.feedback = true
    } else if (entry.kind === 'observation') {
      unit.has.failure = !entry.ok // a result whose call is not in the transcript; kept as it is
      unit.results.set(entry.actionId, entry)
    } else if (entry.actionIds.length) {
      unit.has.calls = true
      for (const id of entry.actionIds) {
        unit.open.add(id)
        this.byAction.set(id, unit)
      }
    } else {
      unit.has.answer = true
    }
    this.push(unit, message)
    this.units.push(unit)
  }

  /** The counter the units were counted with, and its revision then: another one means counting again. */
  counts(counter: RenderOptions['counter']): boolean {
    return this.options.counter === counter && this.revision === counter.revision
  }

  private push(unit: Unit, message: ContextMessage): void {
    unit.messages.push(message)
    unit.tokens += messageTokens(message, this.options.counter)
    unit.short = undefined
  }

  private absorb(into: Unit, other: Unit): void {
    for (const message of other.messages) this.push(into, message)
    for (const id of other.open) {
      into.open.add(id)
      this.byAction.set(id, into)
    }
    for (const [id, text] of other.results) into.results.set(id, text)
    into.goal ||= other.goal
    for (const key of Object.keys(into.has) as (keyof Unit['has'])[]) into.has[key] ||= other.has[key]
  }
}

/** The class that decides how long a unit is kept: the highest-priority one among what it holds. */
export function classOf(unit: Unit, priority: (c: ItemClass) => number): ItemClass {
  const held: ItemClass[] = []
  if (unit.has.input) held.push('inputs')
  if (unit.has.feedback) held.push('feedback')
  if (unit.has.failure) held.push('failures')
  if (unit.has.calls) held.push('exchanges')
  if (unit.has.answer || held.length === 0) held.push('answers')
  return held.reduce((best, c) => (priority(c) > priority(best) ? c : best))
}

/** The unit with each tool result clipped to `tokens`, or null when that would not make it smaller. */
export function shortened(unit: Unit, tokens: number, citation: SafeRegex, counter: RenderOptions['counter']): Unit['short'] {
  if (unit.short !== undefined) return unit.short
  let changed = false
  const messages = unit.messages.map((m) => {
    const result = m.role === 'tool' && m.actionId !== undefined ? unit.results.get(m.actionId) : undefined
    if (result === undefined) return m
    const text = resultText(result, tokens, citation, counter)
    if (text === m.text) return m
    changed = true
    return { ...m, text }
  })
  const total = messages.reduce((n, m) => n + messageTokens(m, counter), 0)
  unit.short = changed && total < unit.tokens ? { messages, tokens: total } : null
  return unit.short
}
