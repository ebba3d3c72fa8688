/**
 * What a scripted provider answers, independent of its wire format: the test says what the model
 * "decides" (text, tool calls, usage) or which fault to serve, and each protocol renders it exactly as
 * the real API would.
 */

export interface ScriptedToolCall {
  name: string
  /** Arguments; sent as their JSON. */
  args?: unknown
  /** Send this exact text as the arguments instead (for example truncated JSON). */
  rawArgs?: string
}

/** A fault served instead of (or in the middle of) an answer. */
export interface Fault {
  /** Answer with this HTTP status and a provider-style error body. */
  status?: number
  /** Retry-After header (seconds or an HTTP date) with the status. */
  retryAfter?: string
  /** Error type in the body (default: the provider's usual type for the status). */
  errorType?: string
  message?: string
  /** Close the connection after this many stream messages (0: right after the headers). */
  dropAfter?: number
  /** Close the connection before sending any response. */
  dropBeforeHeaders?: boolean
  /** Wait this long before the first byte, then answer normally. */
  firstByteDelayMs?: number
  /** Send an in-stream error event after this many messages (Anthropic `event: error`, OpenAI `{"error":...}`). */
  streamErrorAfter?: number
  /** Send a data line that is not JSON after this many messages. */
  corruptAfter?: number
  /** Go quiet for `stallMs` after this many stream messages, then go on. */
  stallAfter?: number
  stallMs?: number
  /** Wait this long between any two stream messages. */
  gapMs?: number
}

/** Ways compatible servers (and newer API versions) differ from the reference, served on demand. */
export interface Quirks {
  /** OpenAI: repeat the tool's full name in every chunk of its call. */
  repeatNames?: boolean
  /** OpenAI: send each call whole in one chunk, without `index`. */
  noIndex?: boolean
  /** OpenAI: `"usage": null` on every chunk but the last, as the API does when usage is asked for. */
  nullUsage?: boolean
  /** Anthropic: a thinking block before the answer. */
  thinking?: string
  /** Both: an event (Anthropic) or a chunk field (OpenAI) this adapter version does not know. */
  unknownEvent?: boolean
  /** OpenAI: a stream of no choice at all, only the usage chunk and then `data: [DONE]`. */
  usageOnly?: boolean
}

export interface ScriptedReply {
  text?: string
  toolCalls?: ScriptedToolCall[]
  usage?: { input?: number; output?: number; cachedInput?: number; cacheWrite?: number }
  /** Why the answer stopped, in the provider's words (default: tool calls or a normal stop). */
  stopReason?: string
  /** Stream text and arguments in pieces of this many characters. */
  chunkChars?: number
  fault?: Fault
  /** Answer with one JSON body even when asked to stream, as some compatible servers do. */
  ignoreStream?: boolean
  quirks?: Quirks
}

/** `text` cut into pieces of `size` characters (at least one piece, possibly empty). */
export function pieces(text: string, size = 8): string[] {
  if (text === '') return ['']
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

export const argsText = (call: ScriptedToolCall): string => call.rawArgs ?? JSON.stringify(call.args ?? {})
