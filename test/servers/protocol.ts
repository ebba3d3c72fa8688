/** What a provider's wire format contributes to the scripted server. */
import type { IncomingHttpHeaders } from 'node:http'
import type { Fault, ScriptedReply } from './reply.ts'

export interface Protocol {
  name: 'openai' | 'anthropic'
  /** The path the API is served under, for example /v1/chat/completions. */
  path: string
  /** A 401 (status and body) when the request does not carry `apiKey` the way this provider wants it. */
  authenticate(headers: IncomingHttpHeaders, apiKey: string): { status: number; body: unknown } | undefined
  /** Why the real API would refuse this request with a 400, or undefined when it is valid. */
  check(body: unknown, headers: IncomingHttpHeaders): string | undefined
  /** The complete server-sent event messages of a streamed answer (each ends with a blank line). */
  stream(reply: ScriptedReply, request: Record<string, any>, n: number): string[]
  /** The body of a non-streamed answer. */
  json(reply: ScriptedReply, request: Record<string, any>, n: number): unknown
  /** The body of an error response. */
  error(status: number, message: string, fault?: Fault): unknown
  /** An error delivered inside the stream. */
  streamError(fault: Fault): string
}

export const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`

/** zod issues as one line, the way providers list what is wrong. */
export function issuesText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`).join('; ')
}
