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
 *
 * In a long run the projection can hold the whole transcript, and compaction runs at every step. So the
 * split of a run's projection is kept and extended with what it gained (blocks.ts), and a step reads
 * only what is new: the blocks after the last summary, the calls not yet settled, the transcript entries
 * of what is summarised now. What is left that grows with the run is a comparison by identity of the
 * projection's messages with those taken before (a pointer each).
 */
import {
  counterOf,
  CordageError,
  type CompactRequest,
  type CompactResult,
  type CompactorService,
  type ContextMessage,
  type ModelService,
  type RunState,
  type TokenCounter,
  type Usage,
} from 'cordage'
import { ProjectionSplit } from './blocks.ts'
import { describeMissing, uncovered } from './coverage.ts'
import { extractiveSummary } from './extractive.ts'
import { needsOf, type Need, type NeedPatterns } from './needs.ts'
import { summaryPrompt } from './prompt.ts'
import { messageTokens, sumTokens } from './tokens.ts'

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
  /** The older blocks are the first `at`; the first `extending` of them the previous summary already stands for. */
  at: number
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
  /** Sorted, each once. */
  seqs: number[]
  covered: Set<number>
  /** What must survive of the older part it stands for: an extension checks these and the new part's. */
  needs: Need[]
  text: string
  message: ContextMessage
}

/**
 * What the compactor keeps of one run between steps: the split of its projection, extended at each
 * step, the last summary, and two counts of leading blocks that save reading the older part again.
 */
interface RunCache {
  split: ProjectionSplit
  installed?: Installed
  /** Leading blocks whose calls are all settled (an outcome on record is final): pinning looks after them. */
  settled: number
  /** Leading blocks the installed summary stands for, when counted for this split and summary. */
  covered?: { of: Installed; count: number }
}

export class SummaryCompactor implements CompactorService {
  readonly strategy = Strategy
  readonly threshold: number
  private runs = new Map<string, RunCache>()

  constructor(
    private options: SummaryOptions,
    private model: () => ModelService | undefined,
  ) {
    this.threshold = options.windowTokens - options.reserveTokens
  }

  async compact({ state, projection, limit, signal }: CompactRequest): Promise<CompactResult> {
    // The agent model's counter, the one the context plugins counted the projection with.
    const counter = counterOf(this.model())
    const count = (m: ContextMessage) => messageTokens(m, counter)
    const run = this.cacheOf(state.runId, projection.messages, counter)
    const { head, headTokens, blocks } = run.split
    const pin = pinnedFrom(run, state)
    const previous = run.installed
    const reused = previous && this.reuse(run, previous, pin, limit, count)
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

    // Only the part the previous summary does not stand for is read: its seqs and needs are carried over.
    const lead = previous ? coveredCount(run, previous) : 0
    const plan = (at: number): Plan => {
      const extending = Math.min(lead, at)
      const fresh = blocks.slice(extending, at)
      const seqs = fresh.flatMap((b) => b.seqs)
      const summarised = extending ? mergeSorted(previous!.seqs, seqs) : [...new Set(seqs)].sort((a, b) => a - b)
      const tail = blocks.slice(at)
      const tailSize = tail.reduce((n, b) => n + b.tokens, 0)
      const frame = count(summaryMessage('', summarised, 'extractive', this.options.recall)) + 1
      const needs = needsOf(
        fresh.flatMap((b) => b.messages),
        state,
        this.options.patterns,
      )
      return {
        at,
        extending,
        summarised,
        kept: tail.flatMap((b) => b.messages),
        needs: extending ? [...previous!.needs, ...needs] : needs,
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
      const { at, extending, needs, budget } = chosen
      const prompt = summaryPrompt({
        older: blocks.slice(extending, at).flatMap((b) => b.messages),
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
        if (candidate && counter.count(candidate) <= budget && uncovered(candidate, needs).length === 0) text = candidate
      } catch (error) {
        // A cancelled run stops here; any other failure of the model leaves the extractive summary.
        if (signal.aborted) throw error
      }
    }
    if (text === undefined) {
      // Extractive: within the summary's share at the same cut; else in all the room left; else summarising
      // more and keeping less verbatim, down to the pinned part.
      mode = 'extractive'
      text = extractiveSummary(chosen.needs, chosen.summarised, chosen.budget, counter)
      for (let at = cut; at <= pin && text === undefined; at++) {
        chosen = at === cut ? chosen : plan(at)
        text = extractiveSummary(chosen.needs, chosen.summarised, chosen.room, counter)
      }
      if (text === undefined)
        throw new CordageError(
          'internal_error',
          `${Strategy}: the summary does not fit: ${chosen.needs.length} items must survive and ${chosen.room} tokens are left for them`,
        )
      const missing = uncovered(text, chosen.needs)
      if (missing.length) throw new CordageError('internal_error', `${Strategy}: the extractive summary misses ${describeMissing(missing)}`)
    }

    const { summarised, kept, needs } = chosen
    const message = summaryMessage(text, summarised, mode, this.options.recall)
    const messages = [...head, message, ...kept]
    const tokens = sumTokens(messages, counter)
    if (tokens > limit)
      throw new CordageError('internal_error', `${Strategy}: the compacted projection has ${tokens} tokens, over the limit of ${limit}`)
    const installed: Installed = { seqs: summarised, covered: new Set(summarised), needs, text, message }
    run.installed = installed
    run.covered = { of: installed, count: chosen.at }
    return { messages, tokens, summarised, usage }
  }

  forget(runId: string): void {
    this.runs.delete(runId)
  }

  /** The run's cache, with its split extended to `messages` (or made anew when they are not its continuation). */
  private cacheOf(runId: string, messages: readonly ContextMessage[], counter: TokenCounter): RunCache {
    let run = this.runs.get(runId)
    if (run) this.runs.delete(runId)
    if (!run) run = { split: new ProjectionSplit(counter), settled: 0 }
    // Another counter (a swapped model, a calibration that moved) splits and counts anew.
    else if (!run.split.extends(messages) || !run.split.counts(counter)) {
      run.split = new ProjectionSplit(counter)
      run.settled = 0
      run.covered = undefined
    }
    run.split.take(messages)
    // What was counted of blocks that a late result merged with later ones is counted again.
    run.settled = Math.min(run.settled, run.split.unchanged)
    if (run.covered) run.covered.count = Math.min(run.covered.count, run.split.unchanged)
    this.runs.set(runId, run)
    if (this.runs.size > this.options.cachedRuns) this.runs.delete(this.runs.keys().next().value!)
    return run
  }

  /** The last summary again, when it still stands for exactly the older blocks and the result fits. */
  private reuse(
    run: RunCache,
    previous: Installed,
    pin: number,
    limit: number,
    count: (m: ContextMessage) => number,
  ): CompactResult | undefined {
    const { head, headTokens, blocks } = run.split
    const k = coveredCount(run, previous)
    if (k === 0 || k > pin || k >= blocks.length) return undefined
    let tokens = headTokens + count(previous.message)
    for (let i = k; i < blocks.length; i++) {
      const block = blocks[i]
      if (block.seqs.some((s) => previous.covered.has(s))) return undefined
      tokens += block.tokens
    }
    if (tokens > limit) return undefined
    const messages = [...head, previous.message]
    for (let i = k; i < blocks.length; i++) messages.push(...blocks[i].messages)
    return { messages, tokens, summarised: previous.seqs }
  }
}

/** How many leading blocks the summary stands for (a block of text from elsewhere counts as covered). */
function coveredCount(run: RunCache, summary: Installed): number {
  const blocks = run.split.blocks
  let k = run.covered?.of === summary ? run.covered.count : 0
  while (k < blocks.length && blocks[k].seqs.every((s) => summary.covered.has(s))) k++
  run.covered = { of: summary, count: k }
  return k
}

/**
 * The first block that must stay verbatim: the last one, or an earlier one with a call still open. A
 * call whose outcome is on record never opens again, so the leading blocks found settled are not read again.
 */
function pinnedFrom(run: RunCache, state: Readonly<RunState>): number {
  const blocks = run.split.blocks
  const actions = state.actions
  let first = run.settled
  while (first < blocks.length && !blocks[first].actionIds.some((id) => OpenStatuses.has(actions[id]?.status as string))) first++
  run.settled = first
  return first < blocks.length ? first : blocks.length - 1
}

const OpenStatuses = new Set(['proposed', 'allowed', 'awaiting_approval', 'approved', 'running'])

/** `more` added to the sorted list `seqs`, sorted, each once (a new list). */
function mergeSorted(seqs: readonly number[], more: readonly number[]): number[] {
  const last = seqs.length ? seqs[seqs.length - 1] : -Infinity
  const sorted = [...new Set(more)].sort((a, b) => a - b)
  if (sorted.length === 0 || sorted[0] > last) return seqs.concat(sorted)
  return [...new Set([...seqs, ...sorted])].sort((a, b) => a - b)
}

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
