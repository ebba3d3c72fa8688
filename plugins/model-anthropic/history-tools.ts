/**
 * The API refuses a request whose messages hold tool_use or tool_result blocks but that defines no
 * tools (400 "Requests which include tool_use or tool_result blocks must define tools"; Bedrock's
 * Converse API likewise wants a toolConfig). That is every request that offers none after the run used
 * some: a compactor's summary request, or a step whose tools the policy hid. Such a request gets the
 * definitions of the tools its history calls, as this plugin last offered them (the same bytes, so the
 * cached prefix still matches), or a stub for a tool it never offered in this process (a resumed run),
 * with `tool_choice: none`, so the model answers in text and calls none of them.
 */
import type { ToolView } from 'cordage'

/** A stand-in definition for a tool whose own this plugin has not seen. */
export const stubTool = (name: string): ToolView => ({
  name,
  description: 'A tool used earlier in this conversation. It is not available now: do not call it.',
  inputSchema: { type: 'object' },
})

/** The tools this plugin offered, by name, as last offered. */
export class OfferedTools {
  private readonly known = new Map<string, ToolView>()

  remember(tools: ToolView[]): void {
    for (const tool of tools) this.known.set(tool.name, tool)
  }

  /** The definitions of the named tools: the last ones offered, else stubs. */
  definitions(names: Iterable<string>): ToolView[] {
    return [...new Set(names)].map((name) => this.known.get(name) ?? stubTool(name))
  }
}
