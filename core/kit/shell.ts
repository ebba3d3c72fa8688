/**
 * @module kit/shell
 * Words of a command line a message suggests, quoted so that a POSIX shell reads them back unchanged
 * (a preset path with a space, a `--set` value with quotes in it).
 */

/**
 * @example shellQuote('presets/default.yml') // presets/default.yml
 * @example shellQuote("my agents/it's.yml") // 'my agents/it'\''s.yml'
 */
export function shellQuote(word: string): string {
  return /^[\w./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
