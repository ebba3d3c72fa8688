/**
 * The transcript → messages projection. Built incrementally: the transcript only grows, so each step
 * appends the entries added since the last step instead of rebuilding the whole list, which keeps the
 * cost of a step flat in the length of the run.
 */
import { transcriptMessage, type AssembleInput, type ContextMessage, type ContextService, type Projection } from 'cordage'

interface Built {
  entries: number
  messages: ContextMessage[]
  tokens: number
}

/** About four characters per token, plus a few for the message frame: a documented estimate, not a tokenizer. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4) + 4
}

export class BasicContext implements ContextService {
  private built = new Map<string, Built>()

  constructor(
    private system: string,
    private cachedRuns: number,
  ) {}

  assemble({ state }: AssembleInput): Projection {
    let built = this.built.get(state.runId)
    if (!built || built.entries > state.transcript.length) {
      const system: ContextMessage = { role: 'system', text: this.system, source: 0 }
      built = { entries: 0, messages: [system], tokens: estimateTokens(this.system) }
      this.built.set(state.runId, built)
      if (this.built.size > this.cachedRuns) this.built.delete(this.built.keys().next().value!)
    }
    // Read once: `state` is the kernel's read-only view, and each property read through it costs a trap.
    const transcript = state.transcript
    const length = transcript.length
    for (let i = built.entries; i < length; i++) {
      const message = transcriptMessage(transcript[i])
      built.messages.push(message)
      built.tokens += estimateTokens(message.text) + (message.calls ? estimateTokens(JSON.stringify(message.calls)) : 0)
    }
    built.entries = length
    return { messages: built.messages.slice(), tokens: built.tokens }
  }

  forget(runId: string): void {
    this.built.delete(runId)
  }
}
