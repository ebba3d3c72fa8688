/**
 * The summary compactor. Above its threshold (context window minus a reserve), it keeps the head (system
 * prompt, sources, goal) and the most recent blocks verbatim, and replaces the older blocks with one
 * summary message. The summary is asked of the model (purpose 'summary', no tools); when the model fails
 * or its summary misses something that must survive (needs.ts), an extractive summary is used instead.
 * Nothing is installed that has not passed the coverage check: if even the extractive summary cannot be
 * made to fit, compaction throws and the kernel records it as rejected.
 *
 * The projection is rebuilt from run state every step, so compaction runs again at every step over the
 * threshold. To avoid a model call each time, the last summary of a run is reused while it still covers
 * the older part exactly and the result fits; when it no longer fits, the new summary extends the old
 * one with what has aged since (a rolling summary).
 */
import {
  CordageError,
  type CompactRequest,
  type CompactResult,
  type CompactorService,
  type ContextMessage,
  type ModelService,
  type RunState,
  type Usage,
} from 'cordage'
import { splitProjection, type Block } from './blocks.ts'
import { describeMissing, uncovered } from './coverage.ts'
import { extractiveSummary } from './extractive.ts'
import { needsOf, type Need, type NeedPatterns } from './needs.ts'
import { summaryPrompt } from './prompt.ts'
import { estimateTokens, messageTokens, sumTokens } from './tokens.ts'

/** Bump when what the strategy keeps, asks or checks changes: runs record it in compaction events. */
export const StrategyVersion = 1
export const Strategy = `summary@${StrategyVersion}`
/** Provenance of the summary message in the projection. */
export const SummaryRef = `compaction:${Strategy}`

export interface SummaryOptions {
  windowTokens: number
  reserveTokens: number
  keepRecentShare: number
  summaryShare: number
  summaryMaxTokens: number
  useModel: boolean
  patterns: NeedPatterns
  /** Whether the recall tool is there to fetch summarised events (the summary says so). */
  recall: boolean
  cachedRuns: number
}

type Mode = 'model' | 'extractive'

/** One way to cut: the older blocks to summarise, what stays verbatim, and the room left for the summary text. */
interface Plan {
  older: Block[]
  /** Leading older blocks the previous summary already stands for. */
  extending: number
  summarised: number[]
  needs: Need[]
  kept: ContextMessage[]
  /** Tokens for the summary text: its share of the limit, or what is left if that is less. */
  budget: number
  /** Tokens left for the summary text at all; the extractive fallback may take them rather than fail. */
  room: number
}

interface Installed {
  seqs: number[]
  covered: Set<number>
  text: string
  message: ContextMessage
}

export class SummaryCompactor implements CompactorService {
  readonly strategy = Strategy
  readonly threshold: number
  private installed = new Map<string, Installed>()

  constructor(
    private options: SummaryOptions,
    private model: () => ModelService | undefined,
  ) {
    this.threshold = options.windowTokens - options.reserveTokens
  }

  async compact({ state, projection, limit, signal }: CompactRequest): Promise<CompactResult> {
    const { head, headTokens, blocks } = splitProjection(projection.messages)
    const pin = pinnedFrom(blocks, state)
    const previous = this.installed.get(state.runId)
    const reused = previous && this.reuse(previous, head, blocks, pin, limit)
    if (reused) return reused

    // The recent part: whole blocks from the end, within its share, and always from the first pinned block on.
    const target = Math.min(this.options.summaryMaxTokens, Math.floor(limit * this.options.summaryShare))
    const tailBudget = Math.min(Math.floor(limit * this.options.keepRecentShare), limit - headTokens - target)
    let cut = blocks.length - 1
    let tailTokens = blocks[cut]?.tokens ?? 0
    while (cut > 0 && (cut > pin || tailTokens + blocks[cut - 1].tokens <= tailBudget)) tailTokens += blocks[--cut].tokens
    if (cut <= 0)
      throw new CordageError(
        'internal_error',
        `${Strategy}: nothing to summarise: the goal and the part that must stay verbatim (${headTokens + tailTokens} tokens) leave no older part`,
      )

    const plan = (at: number): Plan => {
      const older = blocks.slice(0, at)
      const extending = previous ? leadingCovered(older, previous.covered) : 0
      const summarised = [...new Set([...(extending ? previous!.seqs : []), ...older.flatMap((b) => b.seqs)])].sort((a, b) => a - b)
      const tail = blocks.slice(at)
      const tailSize = tail.reduce((n, b) => n + b.tokens, 0)
      const frame = messageTokens(summaryMessage('', summarised, 'extractive', this.options.recall)) + 1
      return {
        older,
        extending,
        summarised,
        kept: tail.flatMap((b) => b.messages),
        needs: needsOf(
          older.flatMap((b) => b.messages),
          state,
          this.options.patterns,
        ),
        budget: Math.min(limit - headTokens - tailSize, target) - frame,
        room: limit - headTokens - tailSize - frame,
      }
    }

    let chosen = plan(cut)
    let usage: Usage | undefined
    let text: string | undefined
    let mode: Mode = 'model'
    const model = this.options.useModel ? this.model() : undefined
    if (model) {
      const { older, extending, needs, budget } = chosen
      const prompt = summaryPrompt({
        older: older.slice(extending).flatMap((b) => b.messages),
        needs,
        previous: extending ? previous!.text : undefined,
        maxTokens: budget,
      })
      try {
        const response = await model.respond({
          runId: state.runId,
          stepId: `s${state.steps}`,
          stepIndex: state.steps,
          messages: prompt,
          tools: [],
          signal,
          purpose: 'summary',
        })
        usage = response.usage
        const candidate = response.decision.kind === 'final' ? response.decision.text.trim() : ''
        if (candidate && estimateTokens(candidate) <= budget && uncovered(candidate, needs).length === 0) text = candidate
      } catch (error) {
        // A cancelled run stops here; any other failure of the model leaves the extractive summary.
        if (signal.aborted) throw error
      }
    }
    if (text === undefined) {
      // Extractive: within the summary's share at the same cut; else in all the room left; else summarising
      // more and keeping less verbatim, down to the pinned part.
      mode = 'extractive'
      text = extractiveSummary(chosen.needs, chosen.summarised, chosen.budget)
      for (let at = cut; at <= pin && text === undefined; at++) {
        chosen = at === cut ? chosen : plan(at)
        text = extractiveSummary(chosen.needs, chosen.summarised, chosen.room)
      }
      if (text === undefined)
        throw new CordageError(
          'internal_error',
          `${Strategy}: the summary does not fit: ${chosen.needs.length} items must survive and ${chosen.room} tokens are left for them`,
        )
      const missing = uncovered(text, chosen.needs)
      if (missing.length) throw new CordageError('internal_error', `${Strategy}: the extractive summary misses ${describeMissing(missing)}`)
    }

    const { summarised, kept } = chosen
    const message = summaryMessage(text, summarised, mode, this.options.recall)
    const messages = [...head, message, ...kept]
    const tokens = sumTokens(messages)
    if (tokens > limit)
      throw new CordageError('internal_error', `${Strategy}: the compacted projection has ${tokens} tokens, over the limit of ${limit}`)
    this.remember(state.runId, { seqs: summarised, covered: new Set(summarised), text, message })
    return { messages, tokens, summarised, usage }
  }

  forget(runId: string): void {
    this.installed.delete(runId)
  }

  /** The last summary again, when it still stands for exactly the older blocks and the result fits. */
  private reuse(previous: Installed, head: ContextMessage[], blocks: Block[], pin: number, limit: number): CompactResult | undefined {
    const k = leadingCovered(blocks, previous.covered)
    if (k === 0 || k > pin || k >= blocks.length) return undefined
    if (blocks.slice(k).some((b) => b.seqs.some((s) => previous.covered.has(s)))) return undefined
    const messages = [...head, previous.message, ...blocks.slice(k).flatMap((b) => b.messages)]
    const tokens = sumTokens(messages)
    return tokens <= limit ? { messages, tokens, summarised: previous.seqs } : undefined
  }

  private remember(runId: string, installed: Installed): void {
    this.installed.delete(runId)
    this.installed.set(runId, installed)
    if (this.installed.size > this.options.cachedRuns) this.installed.delete(this.installed.keys().next().value!)
  }
}

/** How many leading blocks hold only seqs in `covered` (a block of text from elsewhere counts as covered). */
function leadingCovered(blocks: readonly Block[], covered: Set<number>): number {
  let k = 0
  while (k < blocks.length && blocks[k].seqs.every((s) => covered.has(s))) k++
  return k
}

/** The first block that must stay verbatim: the last one, or an earlier one with a call still open. */
function pinnedFrom(blocks: readonly Block[], state: Readonly<RunState>): number {
  const open = new Set(
    Object.values(state.actions)
      .filter((a) => OpenStatuses.has(a.status))
      .map((a) => a.id),
  )
  const first = blocks.findIndex((b) => b.actionIds.some((id) => open.has(id)))
  return first >= 0 ? Math.min(first, blocks.length - 1) : blocks.length - 1
}

const OpenStatuses = new Set(['proposed', 'allowed', 'awaiting_approval', 'approved', 'running'])

/**
 * The summary as the model sees it. A user message, not a system one: several providers accept system
 * messages only at the start, and the marker says plainly that this is the harness speaking.
 */
function summaryMessage(text: string, summarised: readonly number[], mode: Mode, recall: boolean): ContextMessage {
  const how = mode === 'model' ? 'written by the model' : 'extracted from the run log'
  const fetch = recall ? 'the recall tool fetches any of them by seq' : 'the run log keeps them'
  const last = summarised.length ? ` up to seq ${summarised[summarised.length - 1]}` : ''
  return {
    role: 'user',
    source: 0,
    ref: SummaryRef,
    text: `[summary of earlier steps: ${summarised.length} events${last}, ${how}; ${fetch}]\n${text}`,
  }
}
