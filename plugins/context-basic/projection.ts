/**
 * The transcript → messages projection. Built incrementally: the transcript only grows, so each step
 * appends the entries added since the last step instead of rebuilding the whole list, which keeps the
 * cost of a step flat in the length of the run. Tokens are counted by the agent model's counter (the
 * kit's estimate when it has none); when that counter changes (another model, a calibration that
 * moved), the projection is counted again.
 */
import {
  EstimateCounter,
  messageTokens,
  transcriptMessage,
  type AssembleInput,
  type ContextMessage,
  type ContextService,
  type Projection,
  type TokenCounter,
} from 'cordage'

interface Built {
  entries: number
  messages: ContextMessage[]
  tokens: number
  counter: TokenCounter
  revision: number | undefined
}

/** Tokens of `text` with the message frame, by the kit's estimate. */
export function estimateTokens(text: string): number {
  return messageTokens({ role: 'user', text, source: 0 })
}

export class BasicContext implements ContextService {
  private built = new Map<string, Built>()

  constructor(
    private system: string,
    private cachedRuns: number,
    private counter: () => TokenCounter = () => EstimateCounter,
  ) {}

  assemble({ state }: AssembleInput): Projection {
    let built = this.built.get(state.runId)
    const counter = this.counter()
    if (built && (built.counter !== counter || built.revision !== counter.revision)) {
      built.tokens = built.messages.reduce((n, m) => n + messageTokens(m, counter), 0)
      built.counter = counter
      built.revision = counter.revision
    }
    if (!built || built.entries > state.transcript.length) {
      const system: ContextMessage = { role: 'system', text: this.system, source: 0 }
      built = { entries: 0, messages: [system], tokens: messageTokens(system, counter), counter, revision: counter.revision }
      this.built.set(state.runId, built)
      if (this.built.size > this.cachedRuns) this.built.delete(this.built.keys().next().value!)
    }
    // Read once: `state` is the kernel's read-only view, and each property read through it costs a trap.
    const transcript = state.transcript
    const length = transcript.length
    for (let i = built.entries; i < length; i++) {
      const message = transcriptMessage(transcript[i])
      built.messages.push(message)
      built.tokens += messageTokens(message, counter)
    }
    built.entries = length
    return { messages: built.messages.slice(), tokens: built.tokens }
  }

  forget(runId: string): void {
    this.built.delete(runId)
  }
}
