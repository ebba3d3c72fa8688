import type { Manifest } from 'cordage'

export default {
  name: 'budgets',
  version: '1.0.0',
  description:
    "Token and cost budgets: the agent's maxTokens, maxCostUsd and its thread's, checked at every boundary, with what each model call and wave of tool calls may cost reserved before it starts and settled after.",
  provides: { meter: '1.0.0' },
} satisfies Manifest
