/**
 * A projection split for compaction: the head (everything up to and including the goal, the first user
 * message) is always kept; the rest is a list of blocks. A block is one message, or a model turn with
 * tool calls together with their results, so a cut between blocks never separates a call from its
 * result. Blocks are contiguous: anything between a call and its result joins the call's block.
 *
 * The split of a run is kept from one step to the next and extended with the messages the projection
 * gained (a context provider such as context-basic appends to it), so a step splits only what is new:
 * the cost of a compaction does not grow with the length of the run. A projection that does not begin
 * with exactly the messages taken before (the same objects, in the same order) is split anew.
 */
import { EstimateCounter, type ContextMessage, type TokenCounter } from 'cordage'
import { messageTokens } from './tokens.ts'

export interface Block {
  messages: ContextMessage[]
  tokens: number
  /** Seqs of the log events the block's messages came from (0, text from elsewhere, left out). */
  seqs: number[]
  actionIds: string[]
}

export interface Split {
  head: ContextMessage[]
  headTokens: number
  blocks: Block[]
}

export class ProjectionSplit implements Split {
  head: ContextMessage[] = []
  headTokens = 0
  blocks: Block[] = []
  /** The messages taken in so far, in order. */
  private taken: ContextMessage[] = []
  /** The index in {@link blocks} of the block that holds each call. */
  private byAction = new Map<string, number>()
  /** The head ends with the goal: no later message joins it. */
  private goal = false
  /**
   * Leading blocks that stayed as they are since the last {@link take}: a block below this index was
   * not merged with later ones. Readers that keep an index into the blocks lower theirs to it.
   */
  unchanged = 0
  /** The revision of the counter when the split was made: counts from another one are stale. */
  readonly revision: number | undefined

  /** @param counter counts the blocks: the agent model's counter, or the kit's estimate */
  constructor(readonly counter: TokenCounter = EstimateCounter) {
    this.revision = counter.revision
  }

  /** Whether the counts were made by `counter` as it counts now. */
  counts(counter: TokenCounter): boolean {
    return this.counter === counter && this.revision === counter.revision
  }

  /** Whether `messages` begins with exactly the messages taken so far (the check is by identity). */
  extends(messages: readonly ContextMessage[]): boolean {
    const taken = this.taken
    if (messages.length < taken.length) return false
    for (let i = 0; i < taken.length; i++) if (messages[i] !== taken[i]) return false
    return true
  }

  /** Take in the messages after those taken so far (call {@link extends} first). */
  take(messages: readonly ContextMessage[]): this {
    this.unchanged = this.blocks.length
    for (let i = this.taken.length; i < messages.length; i++) {
      const message = messages[i]
      this.taken.push(message)
      if (!this.goal && message.role === 'user') this.goalAt()
      else if (!this.goal && message.role === 'system' && this.blocks.length === 0) this.toHead(message)
      else this.add(message)
    }
    return this
  }

  /** The message just taken is the first user message: it and everything before it are the head. */
  private goalAt(): void {
    this.head = []
    this.headTokens = 0
    for (const m of this.taken) this.toHead(m)
    this.blocks = []
    this.byAction.clear()
    this.unchanged = 0
    this.goal = true
  }

  private toHead(message: ContextMessage): void {
    this.head.push(message)
    this.headTokens += messageTokens(message, this.counter)
  }

  private add(message: ContextMessage): void {
    const blocks = this.blocks
    const at = message.role === 'tool' && message.actionId ? this.byAction.get(message.actionId) : undefined
    if (at !== undefined) {
      const owner = blocks[at]
      if (at + 1 < blocks.length) {
        // Whatever landed between the call and this result joins the call's block.
        for (const later of blocks.splice(at + 1)) {
          for (const m of later.messages) this.addTo(owner, m)
          for (const id of later.actionIds) {
            owner.actionIds.push(id)
            this.byAction.set(id, at)
          }
        }
        this.unchanged = Math.min(this.unchanged, at)
      }
      this.addTo(owner, message)
      return
    }
    const block: Block = { messages: [], tokens: 0, seqs: [], actionIds: [] }
    for (const call of message.calls ?? []) {
      block.actionIds.push(call.actionId)
      this.byAction.set(call.actionId, blocks.length)
    }
    this.addTo(block, message)
    blocks.push(block)
  }

  private addTo(block: Block, message: ContextMessage): void {
    block.messages.push(message)
    block.tokens += messageTokens(message, this.counter)
    if (message.source > 0) block.seqs.push(message.source)
  }
}

/** The split of one projection, from scratch. */
export function splitProjection(messages: readonly ContextMessage[], counter: TokenCounter = EstimateCounter): Split {
  return new ProjectionSplit(counter).take(messages)
}
