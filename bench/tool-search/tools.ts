/**
 * @module bench/tool-search/tools
 * Registry entries as real tools (defineTool), so the bench and the scenario tests register them in a
 * `tools` service like any plugin would. Their bodies only echo the call: the evaluation is about
 * finding tools, not running them.
 */
import { z } from 'zod'
import { defineTool, type Tool } from 'cordage'
import type { RegistryTool } from './catalog/expand.ts'

export function toolOf(entry: RegistryTool): Tool {
  return defineTool({
    name: entry.name,
    description: entry.description,
    input: z.record(z.string(), z.unknown()),
    inputSchema: structuredClone(entry.inputSchema),
    sideEffect: entry.sideEffect,
    tags: entry.tags,
    run: (args) => ({ output: { tool: entry.name, args } }),
  })
}
