/**
 * An MCP tool result as a Cordage ToolResult: the structured content (or else the content parts) is
 * the output kept in the store; the text parts are what the model reads. A result the server marks
 * `isError` is the tool's own failure: `tool_failed`, which the model gets as an observation.
 */
import { z } from 'zod'
import { CordageError, type ToolResult } from 'cordage'

/**
 * Read loosely on purpose: once a server has answered, the call happened. Refusing an answer over an
 * odd content part would report a write that took effect as failed, so only the shape we use is checked.
 */
export const CallResultSchema = z.looseObject({
  content: z.array(z.unknown()).optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
})

export type CallResult = z.infer<typeof CallResultSchema>

interface Part {
  type?: string
  text?: string
  mimeType?: string
  uri?: string
  name?: string
  resource?: { uri?: string; mimeType?: string; text?: string }
}

/** @throws CordageError `tool_failed` when the server reports the call failed (`isError`) */
export function toToolResult(result: CallResult, tool: string, redact: <T>(value: T) => T): ToolResult {
  const content = (result.content ?? []) as Part[]
  const text = content.map(describePart).filter(Boolean).join('\n')
  if (result.isError) {
    throw new CordageError('tool_failed', redact(text || `${tool} reported an error without saying why`))
  }
  return {
    output: redact(result.structuredContent ?? result.content ?? []),
    // Without text parts the kernel shows the model the output itself.
    observation: text ? redact(text) : undefined,
  }
}

/** What the model reads of one content part: text as it is, anything else named in brackets. */
function describePart(part: Part): string {
  switch (part?.type) {
    case 'text':
      return part.text ?? ''
    case 'image':
      return `[image ${part.mimeType ?? ''}]`.replace(' ]', ']')
    case 'audio':
      return `[audio ${part.mimeType ?? ''}]`.replace(' ]', ']')
    case 'resource_link':
      return `[resource ${part.uri ?? ''}${part.name ? ` "${part.name}"` : ''}]`
    case 'resource':
      return part.resource?.text ?? `[resource ${part.resource?.uri ?? ''}${part.resource?.mimeType ? ` ${part.resource.mimeType}` : ''}]`
    default:
      return `[${part?.type ?? 'unknown'} content]`
  }
}
