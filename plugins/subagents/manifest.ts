import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  /** Agents of the preset this agent may start as subagents. */
  agents: string[]
  /** Agents this agent may hand the run to. */
  handoffs: string[]
  /** How deep children may nest (1: children, no grandchildren). */
  maxDepth: number
  /** How long a spawn_agent call may wait for its child. */
  timeoutMs: number
  /** Tokens one spawn_agent call reserves from the parent's budgets: the child's token cap. */
  childMaxTokens?: number
  /** Dollars one spawn_agent call reserves from the parent's budgets: the child's cost cap. */
  childMaxCostUsd?: number
}

export default {
  name: 'subagents',
  version: '1.3.0',
  description:
    "spawn_agent runs another agent of the preset as a child run within the parent's budgets; handoff moves the run to another agent.",
  requires: { tools: '^1.0.0', agents: '^1.2.0', waits: '^1.0.0' },
  config: Schema.object({
    agents: Schema.array(Schema.string()).default([]).description('Agents spawn_agent may start (names in the preset).'),
    handoffs: Schema.array(Schema.string()).default([]).description('Agents the handoff tool may pass the run to.'),
    maxDepth: Schema.number().min(1).default(2).description('How deep children may nest.'),
    timeoutMs: Schema.number().min(1).default(600_000).description('How long spawn_agent waits for its child.'),
    childMaxTokens: Schema.natural()
      .min(1)
      .description(
        "The spawn_agent tool's cost in tokens: reserved from the parent's budgets before the call, and the child's token budget is capped at it. Parallel spawns reserve from the same pool.",
      ),
    childMaxCostUsd: Schema.number()
      .min(0)
      .description(
        "The spawn_agent tool's cost in dollars: reserved from the parent's budgets, and the child's cost budget is capped at it.",
      ),
  }),
} satisfies Manifest
