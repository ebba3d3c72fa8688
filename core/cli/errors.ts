/**
 * @module cli/errors
 * How a command reports an error on stderr: `error [code]: message` for a person, or with `--json` one
 * line `{"error":{"code","message","where"}}` for a program, for every error a command can end with
 * (usage, config, store, internal).
 */
import { CordageError } from '../contracts/errors.ts'
import { withPresetFlags } from './hints.ts'
import type { Output } from './output.ts'

/** What the error is about: the command given (null when it is the command that is wrong), the preset read, the flag named. */
export interface ErrorWhere {
  command: string | null
  preset?: string
  flag?: string
}

export interface ErrorReport {
  code: string
  message: string
  where: ErrorWhere
  /** The problems one by one, when the error holds several (a preset's, a lock file's). */
  details?: unknown
  /** Internal errors only, and only when debugging (CORDAGE_DEBUG=1 or log level debug): where in the code it happened. */
  stack?: string
}

/** The command line as far as an error needs it: the command and flags as given, even when they did not parse. */
export interface Invocation {
  command: string | null
  flags: Record<string, unknown>
  /** Debugging: an internal error's JSON keeps its stack (absolute paths of this machine), left out otherwise. */
  debug?: boolean
}

export function errorReport(error: unknown, at: Invocation): ErrorReport {
  const where: ErrorWhere = { command: at.command }
  if (typeof at.flags.preset === 'string') where.preset = at.flags.preset
  if (!CordageError.is(error)) {
    const message = String((error as Error)?.message ?? error).split('\n')[0]
    const stack = (error as Error)?.stack
    return { code: 'internal_error', message, where, ...(at.debug && stack ? { stack } : {}) }
  }
  // A message about one flag starts with it (or quotes it, from the parser): that is where.
  const flag = /^(--[a-z][\w-]*)|^Unknown option '(--[\w-]+)'|^Option '(--[\w-]+)/.exec(error.message)
  if (flag) where.flag = flag[1] ?? flag[2] ?? flag[3]
  return { code: error.code, message: error.message, where, ...(error.data !== undefined ? { details: error.data } : {}) }
}

export function reportError(io: Output, error: unknown, at: Invocation & { json?: boolean }): void {
  const report = errorReport(error, at)
  if (at.json) io.err(JSON.stringify({ error: report }))
  else if (!CordageError.is(error)) io.err(`internal error: ${(error as Error)?.stack ?? error}`)
  // A message made where the preset is not known (the kernel's "cordage approve RUN ACTION") gets the
  // preset flags of this command, so the command it suggests works when copied elsewhere.
  else io.err(`error [${report.code}]: ${withPresetFlags(report.message, at.flags)}`)
}

/**
 * The command and flags of argv as well as they can be read without parsing it (which may be what
 * failed). Debugging is CORDAGE_DEBUG=1, or the log level debug (--log-level or CORDAGE_LOG_LEVEL).
 */
export function invocationOf(argv: string[], known: string[], env: NodeJS.ProcessEnv = process.env): Invocation & { json: boolean } {
  const [name, ...rest] = argv
  const flags: Record<string, unknown> = {}
  const end = rest.indexOf('--')
  const args = end < 0 ? rest : rest.slice(0, end)
  const preset = args.findIndex((a) => a === '--preset' || a.startsWith('--preset='))
  if (preset >= 0) flags.preset = args[preset].includes('=') ? args[preset].slice('--preset='.length) : args[preset + 1]
  const level = args.findIndex((a) => a === '--log-level' || a.startsWith('--log-level='))
  const logLevel =
    level < 0 ? env.CORDAGE_LOG_LEVEL : args[level].includes('=') ? args[level].slice('--log-level='.length) : args[level + 1]
  const debug = env.CORDAGE_DEBUG === '1' || logLevel === 'debug'
  return { command: name !== undefined && known.includes(name) ? name : null, flags, json: args.includes('--json'), debug }
}
