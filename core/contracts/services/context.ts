/**
 * @module services/context
 * The `context` contract: build the model-visible projection for one step from durable run state.
 * State is not context (invariant 5): the projection may shrink, reorder or summarise, but it is
 * rebuilt from state every step and never written back into it.
 */
import type { ModelReasoning } from '../data.ts'
import type { ToolView } from './tools.ts'
import type { RunState } from '../state.ts'

export const ContextContract = '1.3.0'

/** One message of the projection, with provenance back to the run log. */
export interface ContextMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  text: string
  /** Tool calls the assistant made in this message (assistant messages only). */
  calls?: { actionId: string; name: string; args: unknown }[]
  /** The action whose observation this is (tool messages only). */
  actionId?: string
  /**
   * The tool failed: this observation reports an error, not a result (tool messages only). An adapter
   * whose provider has a flag for it sends it (Anthropic's `is_error`); the text still says so for one
   * that has none. Since 1.3.0.
   */
  isError?: boolean
  /** Seq of the event this message was derived from; 0 for text that does not come from the log (the system prompt). */
  source: number
  /** Where text that does not come from the log came from (a file, a section of it, a note), for provenance. Since 1.1.0. */
  ref?: string
  /**
   * What the model's provider needs back with this assistant message (its signed thinking blocks, for
   * example), as the model gave it: pass it on unchanged, or drop the message. Since 1.2.0.
   */
  reasoning?: ModelReasoning
}

export interface Projection {
  messages: ContextMessage[]
  /** Estimated tokens of the projection (the provider's count is in the model usage). */
  tokens: number
}

export interface AssembleInput {
  state: Readonly<RunState>
  tools: ToolView[]
}

export interface ContextService {
  /**
   * Assemble the projection for the next model call.
   *
   * Contract: pure with respect to run state (reads it, never changes it); the same state gives the
   * same projection. Must keep every tool call paired with its observation. May throw only for a bug;
   * the kernel then fails the run with `internal_error`.
   */
  assemble(input: AssembleInput): Projection | Promise<Projection>
}

declare module 'cordis' {
  interface Context {
    context: ContextService
  }
}
