/**
 * Extended thinking. With it on, an answer opens with `thinking` blocks (the model's reasoning, signed)
 * and `redacted_thinking` blocks (encrypted reasoning). On a tool-use continuation the API wants the
 * blocks of the last assistant turn back, unchanged and before its tool_use blocks, and checks the
 * signatures: it refuses the request (400) without them or with one changed. So the blocks travel with
 * the answer as its `reasoning` (provider `anthropic`), are recorded with it, and go back in exactly the
 * shape the API gave them (ThinkingBlockParam, RedactedThinkingBlockParam in @anthropic-ai/sdk).
 */
import { CordageError, type ModelReasoning } from 'cordage'
import { z } from 'zod'
import { MinThinkingBudget, type Config } from './manifest.ts'

/** The `provider` of the reasoning this plugin makes and reads back. */
export const ReasoningProvider = 'anthropic'

const ThinkingBlock = z.strictObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().min(1) })
const RedactedThinkingBlock = z.strictObject({ type: z.literal('redacted_thinking'), data: z.string().min(1) })
const ReasoningBlocks = z.array(z.discriminatedUnion('type', [ThinkingBlock, RedactedThinkingBlock]))
export type ReasoningBlock = z.infer<typeof ThinkingBlock> | z.infer<typeof RedactedThinkingBlock>

/** A thinking budget the API would refuse, refused when the plugin starts, with what to change. */
export function checkThinking(config: Config): void {
  // Asked for through extraBody, thinking would be on without this plugin knowing to send blocks back.
  if (config.extraBody && 'thinking' in config.extraBody)
    throw new CordageError(
      'plugin_config_invalid',
      'model-anthropic: extraBody.thinking is not taken; set thinking: { budgetTokens } instead, so the thinking blocks go back to the API with their turn.',
    )
  const budget = config.thinking?.budgetTokens
  if (budget === undefined) return
  if (budget < MinThinkingBudget)
    throw new CordageError(
      'plugin_config_invalid',
      `model-anthropic: thinking.budgetTokens is ${budget}, and the API takes at least ${MinThinkingBudget}. Raise it, or leave thinking out to turn extended thinking off.`,
    )
  if (budget >= config.maxTokens)
    throw new CordageError(
      'plugin_config_invalid',
      `model-anthropic: thinking.budgetTokens (${budget}) must be less than maxTokens (${config.maxTokens}), since thinking counts toward max_tokens. Raise maxTokens or lower the budget.`,
    )
}

/** The request's `thinking` field, or undefined when thinking is off. */
export function thinkingParam(config: Config): Record<string, unknown> | undefined {
  return config.thinking ? { type: 'enabled', budget_tokens: config.thinking.budgetTokens } : undefined
}

/**
 * The thinking blocks to send back with an assistant message: this plugin's, checked, in their order.
 * Another provider's reasoning is not ours to send. Blocks that do not have the API's shape (a log
 * edited by hand, a bug) fail the request here rather than be sent for the API to refuse.
 */
export function blocksBack(reasoning: ModelReasoning | undefined, source: number): ReasoningBlock[] {
  if (reasoning?.provider !== ReasoningProvider) return []
  const parsed = ReasoningBlocks.safeParse(reasoning.blocks)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  throw new CordageError(
    'model_permanent',
    `model-anthropic: the thinking blocks recorded with the answer at seq ${source} are not the API's thinking blocks (blocks.${issue.path.map(String).join('.')}: ${issue.message}); the API would refuse them`,
  )
}

/** The reasoning of an answer: its thinking blocks, or undefined when it has none. */
export function reasoningOf(blocks: ReasoningBlock[]): ModelReasoning | undefined {
  return blocks.length ? { provider: ReasoningProvider, blocks } : undefined
}
