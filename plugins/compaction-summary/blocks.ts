/**
 * A projection split for compaction: the head (everything up to and including the goal, the first user
 * message) is always kept; the rest is a list of blocks. A block is one message, or a model turn with
 * tool calls together with their results, so a cut between blocks never separates a call from its
 * result. Blocks are contiguous: anything between a call and its result joins the call's block.
 */
import type { ContextMessage } from 'cordage'
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

export function splitProjection(messages: readonly ContextMessage[]): Split {
  const goal = messages.findIndex((m) => m.role === 'user')
  let headEnd = goal + 1
  if (goal < 0) while (headEnd < messages.length && messages[headEnd].role === 'system') headEnd++
  const head = messages.slice(0, headEnd)
  const blocks: Block[] = []
  const byAction = new Map<string, Block>()
  for (const message of messages.slice(headEnd)) {
    const owner = message.role === 'tool' && message.actionId ? byAction.get(message.actionId) : undefined
    if (owner) {
      // Whatever landed between the call and this result joins the call's block.
      const at = blocks.indexOf(owner)
      for (const later of blocks.splice(at + 1)) {
        for (const m of later.messages) add(owner, m)
        for (const id of later.actionIds) {
          owner.actionIds.push(id)
          byAction.set(id, owner)
        }
      }
      add(owner, message)
      continue
    }
    const block: Block = { messages: [], tokens: 0, seqs: [], actionIds: [] }
    for (const call of message.calls ?? []) {
      block.actionIds.push(call.actionId)
      byAction.set(call.actionId, block)
    }
    add(block, message)
    blocks.push(block)
  }
  return { head, headTokens: head.reduce((n, m) => n + messageTokens(m), 0), blocks }
}

function add(block: Block, message: ContextMessage): void {
  block.messages.push(message)
  block.tokens += messageTokens(message)
  if (message.source > 0) block.seqs.push(message.source)
}
