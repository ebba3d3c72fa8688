/**
 * @module wire/sse
 * Server-sent events, as both OpenAI and Anthropic stream them: `event:` and `data:` lines, a blank line
 * ends a message. Follows the WHATWG parsing rules that matter here (CR, LF or CRLF line ends, several
 * `data:` lines joined by a newline, comments starting with `:`, one space after the colon dropped).
 */

export interface SseMessage {
  /** The `event:` field, or "message" when the server sent none (OpenAI sends none). */
  event: string
  data: string
}

/** Messages from a byte stream, in order. A message left without its closing blank line is dropped, as the spec says. */
export async function* readSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder()
  let buffer = ''
  let event = ''
  let data: string[] = []
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true })
    let start = 0
    for (;;) {
      const end = lineEnd(buffer, start)
      if (!end) break
      const line = buffer.slice(start, end.at)
      start = end.next
      if (line === '') {
        if (data.length) yield { event: event || 'message', data: data.join('\n') }
        event = ''
        data = []
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value.startsWith(' ')) value = value.slice(1)
      if (field === 'data') data.push(value)
      else if (field === 'event') event = value
    }
    buffer = buffer.slice(start)
  }
}

/** Where the next complete line ends. A CR at the very end may be half of a CRLF: wait for more. */
function lineEnd(buffer: string, from: number): { at: number; next: number } | undefined {
  for (let i = from; i < buffer.length; i++) {
    const c = buffer.charCodeAt(i)
    if (c === 10) return { at: i, next: i + 1 }
    if (c === 13) {
      if (i + 1 === buffer.length) return undefined
      return { at: i, next: buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1 }
    }
  }
  return undefined
}
