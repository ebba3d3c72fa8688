/**
 * A range of UTF-8 bytes cut at character edges: a read that starts inside a character skips to the
 * next one, and one that ends inside a character stops before it (the next read starts there), so the
 * text never holds half a character and paging by `next` loses nothing.
 */

/** True for a byte that continues a UTF-8 character (10xxxxxx). */
const continues = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

/**
 * The whole characters of `buf` (read from `offset`, up to `length` bytes wanted, with up to 3 bytes
 * more so the last character can be completed): where they start and end within `buf`.
 */
export function charEdges(buf: Uint8Array, offset: number, length: number): { start: number; end: number } {
  let start = 0
  // Inside a character only when the range does not start the artifact.
  if (offset > 0) while (start < 3 && start < buf.length && continues(buf[start])) start++
  let end = Math.min(buf.length, start + length)
  while (end > start && end < buf.length && continues(buf[end])) end--
  if (end === start && start < buf.length) {
    // Fewer bytes wanted than the next character has: return that one character.
    end = start + 1
    while (end < buf.length && continues(buf[end])) end++
  }
  return { start, end }
}

const decoder = new TextDecoder('utf-8', { fatal: false })

/** The text of `buf[start, end)`; bytes that are not UTF-8 become U+FFFD. */
export function decode(buf: Uint8Array, start: number, end: number): string {
  return decoder.decode(buf.subarray(start, end))
}
