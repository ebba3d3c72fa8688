/**
 * Registry names for MCP tools: `<server>__<tool>`. Cordage (and the model providers behind it) accept
 * letters, digits, `_` and `-`, at most 64 characters; MCP tool names may hold more (dots, slashes), so
 * other characters become `_`. A name that is still too long, or that two tools now share, needs a
 * `rename` in the preset: guessing a shorter name would make names change when the server changes.
 */

/** What defineTool accepts. */
const ToolName = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/

export const NamespaceSeparator = '__'

/** The registry name of an MCP tool: `orders__lookup_order`; `get.status` becomes `get_status`. */
export function registryName(namespace: string, tool: string, rename?: string): string {
  return `${namespace}${NamespaceSeparator}${(rename ?? tool).replace(/[^a-zA-Z0-9_-]/g, '_')}`
}

export function isValidName(name: string): boolean {
  return ToolName.test(name)
}
