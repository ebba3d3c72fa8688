/**
 * @module wire/decision
 * From what a provider streamed (text and tool calls with their argument text) to the kernel's one
 * {@link Decision}. Shared so every adapter turns answers into decisions the same way: arguments are
 * parsed only once complete, and `ask_user` is a tool the adapter offers, not a tool that runs.
 */
import type { Decision } from '../contracts/services/model.ts'
import type { ToolView } from '../contracts/services/tools.ts'
import { parseArgs } from './args.ts'

/** A tool call as received: the provider's id, the name, the complete argument text. */
export interface ReceivedCall {
  id?: string
  name: string
  argsText: string
}

/** The pseudo-tool through which a model asks the user (the run then waits for an answer). */
export const AskUserTool: ToolView = {
  name: 'ask_user',
  description: 'Ask the user a question and wait for the answer. Use it only when you cannot go on without something only the user knows.',
  inputSchema: {
    type: 'object',
    properties: { question: { type: 'string', description: 'The question, in full.' } },
    required: ['question'],
    additionalProperties: false,
  },
}

/** The tools to offer: the visible ones, plus ask_user when enabled and no real tool has that name. */
export function offeredTools(tools: ToolView[], askUser: boolean): { tools: ToolView[]; askUserOffered: boolean } {
  const offered = askUser && !tools.some((t) => t.name === AskUserTool.name)
  return { tools: offered ? [...tools, AskUserTool] : tools, askUserOffered: offered }
}

export function decisionOf(text: string, calls: ReceivedCall[], askUserOffered: boolean): Decision {
  if (calls.length === 0) return { kind: 'final', text }
  if (askUserOffered && calls.length === 1 && calls[0].name === AskUserTool.name) {
    const { args } = parseArgs(calls[0].argsText)
    const question = (args as { question?: unknown })?.question
    if (typeof question === 'string' && question.trim()) return { kind: 'ask_user', question }
  }
  const proposed = calls.map((call) => {
    const { args, argsError } = parseArgs(call.argsText)
    return { name: call.name, args, ...(call.id ? { callId: call.id } : {}), ...(argsError ? { argsError } : {}) }
  })
  return text.trim() ? { kind: 'tool_calls', calls: proposed, text } : { kind: 'tool_calls', calls: proposed }
}

/** A provider-safe id for a past call, derived from its action id (providers accept letters, digits, _ and -). */
export function wireCallId(actionId: string): string {
  return `call_${actionId.replace(/[^a-zA-Z0-9_-]/g, '_')}`
}
