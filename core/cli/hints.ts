/**
 * @module cli/hints
 * The command lines the CLI suggests (approve, reject, resume, reconcile, events, …), made to work when
 * they are copied and run from another folder, where another preset (or none) is the default: each
 * names the preset the user gave, as an absolute path, with the `--set` overrides and `--no-lock` that
 * shaped it, as far as the suggested command takes them, and every word quoted for a POSIX shell.
 * Messages made where the preset is not known (the kernel's: "cordage approve RUN ACTION") get the same
 * flags added when the CLI prints them ({@link withPresetFlags}).
 */
import { resolve } from 'node:path'
import { shellQuote } from '../kit/shell.ts'
import { Commands } from './args.ts'
import { DefaultPreset } from './open.ts'
import { Self } from './self.ts'

export { shellQuote }

/** The flags of a command as parsed (or, for an error, as far as they could be read). */
type Flags = Readonly<Record<string, unknown>>

/**
 * The flags that load the preset this command loaded, for `command` (only those it takes): the preset
 * as an absolute path (the default preset too: elsewhere it is another file, or none), each `--set`
 * except `model.…` ones (they belong to `--model`, which only `run` takes), and `--no-lock`.
 */
export function presetFlags(command: string, flags: Flags): string[] {
  const takes = Commands.find((c) => c.name === command)?.flags ?? {}
  const out: string[] = []
  if (takes.preset) out.push('--preset', resolve(String(flags.preset ?? DefaultPreset)))
  if (takes.set) for (const set of (flags.set as string[] | undefined) ?? []) if (!/^model[.[=]/.test(set)) out.push('--set', set)
  if (takes['no-lock'] && flags['no-lock']) out.push('--no-lock')
  return out
}

/**
 * One suggested command line: `cordage COMMAND ARGS… PRESET-FLAGS… TAIL`, the words quoted. `tail` is
 * shown as it is: what the reader fills in or picks (`--input "..."`, `--committed|--not-committed`).
 * @example hint('approve', ['run_1', 's1.a1'], { preset: 'p.yml' }) // cordage approve run_1 s1.a1 --preset /here/p.yml
 */
export function hint(command: string, args: string[], flags: Flags, tail = '', self = Self): string {
  const words = [...args, ...presetFlags(command, flags)].map(shellQuote)
  return [self, command, ...words, tail].filter(Boolean).join(' ')
}

/** The commands a message may suggest, and the words that may follow one (ids, placeholders, flags with their value). */
const Suggested = new RegExp(
  String.raw`(?<![\w./-])(?:npx )?cordage (approve|reject|resume|reconcile|cancel|verify|events|effects|artifacts|grants|revoke|thread|runs|lock)` +
    String.raw`((?: (?:run_\w+(?:\.s\d+\.a\d+)*|s\d+\.a\d+|[A-Z][A-Z_]*|\.\.\.|"[^"]*"|--[a-z][\w-]*(?:\|--[a-z][\w-]*)*(?: (?:[A-Z][A-Z_]*|\.\.\.|"[^"]*"|(?<=--(?:agent|by|scope) )[a-z][\w.-]*))?)(?![\w-]))*)`,
  'g',
)

/**
 * A message with the commands it suggests completed by {@link presetFlags} (and named as this cordage
 * is run: `npx cordage` when installed), unless a command names its preset already.
 * @example withPresetFlags('act on it first: cordage approve run_1 s1.a1', { preset: 'p.yml' })
 *   // 'act on it first: cordage approve run_1 s1.a1 --preset /here/p.yml'
 */
export function withPresetFlags(message: string, flags: Flags, self = Self): string {
  return message.replace(Suggested, (whole: string, command: string, words: string, offset: number) => {
    // A usage synopsis (`usage: cordage effects RUN [--preset FILE]`) is not a command to copy.
    if (/usage: (?:npx )?$/.test(message.slice(Math.max(0, offset - 12), offset))) return whole
    // "the cordage approve command" is prose: a command line has the arguments its command requires.
    const required = Commands.find((c) => c.name === command)!.positionals.filter((p) => !p.startsWith('[')).length
    const given = words.trim()
      ? words
          .trim()
          .split(' --')[0]!
          .split(' ')
          .filter((w) => w && !w.startsWith('--')).length
      : 0
    if (given < required) return whole
    if (/ --preset\b/.test(words)) return `${self} ${command}${words}`
    const added = presetFlags(command, flags).map(shellQuote)
    return [`${self} ${command}${words}`, ...added].join(' ')
  })
}
