/**
 * One MCP tool as a Cordage tool: the server's name, description and input schema, the contract from
 * the preset, and a body that calls the server. Built with defineTool like any other tool, so it runs
 * only with a ticket from a recorded policy decision.
 */
import { defineTool, type Tool, type ToolContract, type ToolIO } from 'cordage'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import type { CallResult } from './result.ts'
import { toToolResult } from './result.ts'
import { argumentCheck } from './schema.ts'

export interface McpToolOptions {
  server: string
  /** The registry name (`<server>__<tool>`). */
  name: string
  contract: ToolContract
  call(tool: string, args: Record<string, unknown>, io: ToolIO, timeoutMs: number): Promise<CallResult>
  redact<T>(value: T): T
}

export function mcpTool(def: McpTool, options: McpToolOptions): { tool: Tool; degraded?: string } {
  const { schema, degraded } = argumentCheck(def.inputSchema)
  const tool = defineTool<Record<string, unknown>>({
    name: options.name,
    description: def.description ?? def.title ?? def.annotations?.title ?? `Tool "${def.name}" of the MCP server "${options.server}".`,
    input: schema,
    // A copy: defineTool trims it, and the server's definition stays as it was listed.
    inputSchema: structuredClone(def.inputSchema) as Record<string, unknown>,
    ...options.contract,
    tags: ['mcp', `mcp:${options.server}`],
    run: async (args, io) => toToolResult(await options.call(def.name, args, io, options.contract.timeoutMs), def.name, options.redact),
  })
  return { tool, degraded }
}
