/**
 * @module services/model
 * The `model` contract: a narrow decision protocol. An adapter turns a provider (OpenAI, Anthropic, a
 * script) into exactly one {@link Decision} per request, plus usage. The kernel never sees a provider's
 * wire format.
 */
import type { ContextMessage } from './context.ts'
import type { ToolView } from './tools.ts'
import type { Decision, ModelReasoning, Usage } from '../data.ts'
export type { ProposedCall, Decision, ModelReasoning, Usage } from '../data.ts'

/** Contract version of `model`. Providers declare it in `provides`, dependents match it with a range. */
export const ModelContract = '1.3.0'

/**
 * How a model counts tokens, for whoever must fit text under a budget in its terms (context assembly,
 * compaction). Since 1.3.0.
 */
export interface TokenCounter {
  /** What counts, for the record: a tokenizer (`o200k_base`) or an estimate (`estimate`, `estimate calibrated`). */
  readonly name: string
  /**
   * Tokens of `text` as the model's provider counts them, or as close as the adapter can tell.
   *
   * Contract: synchronous, cheap enough to call for every message of every step, never throws, and
   * returns a non-negative integer; the same text gives the same count while `revision` stays the same.
   */
  count(text: string): number
  /**
   * Changes whenever `count` may answer differently (a calibration moved): whoever keeps counts from
   * earlier steps counts again. Absent for a counter that never changes.
   */
  readonly revision?: number
}

/**
 * A piece of a streamed answer, as it arrives: preview only. It is not a run event (no seq, not stored,
 * not replayed by cursor); the durable record is `step/model-response`. A tool call in a delta is never
 * acted on: only the complete, parsed decision is.
 */
export interface ModelDelta {
  text?: string
  toolCall?: { index: number; name?: string; argsDelta?: string }
}

export interface ModelRequest {
  runId: string
  stepId: string
  /** 1 for the first model call of the run, 2 for the second, ... Derived from run state, so it survives resume. */
  stepIndex: number
  messages: ContextMessage[]
  tools: ToolView[]
  /** Aborted on cancellation and at the deadline. */
  signal: AbortSignal
  /** Set when someone listens for `model/delta`: a streaming adapter calls it as pieces arrive. */
  onDelta?: (delta: ModelDelta) => void
  /**
   * Why the model is asked: `step` (the default) for the loop's next decision, `summary` when a plugin
   * (a compactor) asks it to summarise; a summary request offers no tools and wants a final answer.
   * Since 1.1.0.
   */
  purpose?: 'step' | 'summary'
}

export interface ModelResponse {
  decision: Decision
  usage: Usage
  /** The model name the adapter used, for the record (for example "gpt-4.1-mini" or "scripted"). */
  model?: string
  /** What must go back to the provider with this answer in the next request. Since 1.2.0. */
  reasoning?: ModelReasoning
}

export interface ModelService {
  /**
   * Ask the model for the next decision.
   *
   * Contract: resolves with exactly one decision. Rejects with a CordageError coded `model_transient`
   * (the kernel may retry with backoff; `data.retryAfterMs` asks it to wait at least that long, as an
   * HTTP Retry-After does), `model_permanent` or `model_invalid_response` (the run fails), or with
   * `signal.reason` when `signal` aborts. Any other rejection is treated as `model_permanent`.
   * Must stop work promptly when `signal` aborts. Must not mutate `messages` or `tools`.
   */
  respond(request: ModelRequest): Promise<ModelResponse>
  /**
   * The model's own token count (its tokenizer, or an estimate calibrated on the usage it reports), for
   * context and compaction plugins; without it they use the kit's estimate (`counterOf`). Since 1.3.0.
   */
  readonly tokens?: TokenCounter
  /**
   * The most output tokens one call may produce (the adapter's cap). A run with a token or cost budget
   * reserves the step's context tokens plus this before each model call, and suspends with
   * `reservation_refused` rather than call when it does not fit (the meter: plugins/budgets). Without
   * it the call is not reserved: the budget is checked at the boundaries only. Optional; issue 12.
   */
  readonly maxOutputTokens?: number
  /** US dollars per million tokens, when known: the cost a model call reserves is estimated from them. Optional; issue 12. */
  readonly prices?: { readonly inputPerMTok: number; readonly outputPerMTok: number }
}

declare module 'cordis' {
  interface Context {
    model: ModelService
  }
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 })

/**
 * What is wrong with a model response, or undefined when it fits the contract. The loop fails the run
 * with `model_invalid_response` rather than act on a malformed decision.
 */
export function checkResponse(response: ModelResponse | undefined): string | undefined {
  const d = response?.decision as Decision | undefined
  if (!d || typeof d !== 'object') return 'no decision'
  if (!response!.usage || typeof response!.usage.inputTokens !== 'number') return 'no usage'
  const r = response!.reasoning as ModelReasoning | undefined
  if (r !== undefined && (typeof r !== 'object' || r === null || typeof r.provider !== 'string' || !Array.isArray(r.blocks)))
    return 'reasoning that is not { provider: string, blocks: [...] }'
  if (d.kind === 'final') return typeof d.text === 'string' ? undefined : 'final decision without text'
  if (d.kind === 'ask_user') return typeof d.question === 'string' ? undefined : 'ask_user decision without a question'
  if (d.kind === 'tool_calls') {
    if (!Array.isArray(d.calls) || d.calls.length === 0) return 'tool_calls decision without calls'
    return d.calls.every((c) => typeof c?.name === 'string') ? undefined : 'a tool call without a name'
  }
  return `unknown decision kind ${JSON.stringify((d as { kind?: unknown }).kind)}`
}
