/**
 * @module log-level
 * The log levels and their parsing, apart from the logger itself so that reading a `--log-level` flag
 * does not load cordis (the CLI's `--version` and `--help` load nothing they do not print).
 */
import { CordageError } from '../contracts/errors.ts'

/** The levels, most severe first: a level shows itself and every level before it. */
export const LogLevels = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LogLevels)[number]

/** Only warnings and errors: what the CLI printed before plugins had a logger. */
export const DefaultLogLevel: LogLevel = 'warn'

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LogLevels as readonly string[]).includes(value)
}

/**
 * `value` as a level, from the `--log-level` flag or $CORDAGE_LOG_LEVEL (`where` names it in the message).
 * @throws CordageError `invalid_input` naming the levels
 */
export function parseLogLevel(value: string, where: string): LogLevel {
  if (isLogLevel(value)) return value
  throw new CordageError('invalid_input', `${where} must be one of ${LogLevels.join(', ')}, got ${JSON.stringify(value)}`)
}
