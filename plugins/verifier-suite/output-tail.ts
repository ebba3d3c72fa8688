/** The end of a command's output, where test runners and compilers put their summary. */

/** stdout then stderr, trimmed, cut to the last `chars` characters (marked when cut). */
export function outputTail(stdout: string, stderr: string, chars: number): string {
  const text = [stdout.trimEnd(), stderr.trimEnd()].filter(Boolean).join('\n').trim()
  if (text.length <= chars) return text
  return `…${text.slice(text.length - chars)}`
}

/** One line, for an evidence ref: whitespace runs collapsed, at most `chars` characters from the end. */
export function oneLineTail(stdout: string, stderr: string, chars: number): string {
  const text = [stdout, stderr].join(' ').replace(/\s+/g, ' ').trim()
  return text.length <= chars ? text : `…${text.slice(text.length - chars)}`
}
