/**
 * @module host/logging
 * Plugin logs, scoped to one Cordage app. A plugin logs with cordis's own logger, `ctx.logger(name)`
 * (reggol, through @cordisjs/logger); each app decides which levels it shows and where they go, and
 * scrubs its agents' secrets from every line. See docs/guides/logging.md.
 *
 * Why a router: reggol keeps its levels and targets in statics shared by every cordis root in the
 * process (`Logger.levels`, `Logger.targets`), so "set a level for this app" cannot be done with its own
 * configuration without changing every other app's. Every record does carry the context that made the
 * logger (`meta.ctx`), though. So once per process the existing targets are wrapped: a record whose
 * context belongs to a Cordage app's root goes to that app's sink (its level, its secrets, its output)
 * and nowhere else; any other record is printed by the target exactly as before. Nothing is silenced
 * for a cordis root that is not a Cordage app, and each app has its own level.
 */
import { Logger, type Context } from 'cordis'
import { AgentKey, pluginOf } from '../kernel/cordis.ts'
import type { Scrubber } from '../kit/secrets.ts'

export { DefaultLogLevel, isLogLevel, LogLevels, parseLogLevel, type LogLevel } from './log-level.ts'
import { DefaultLogLevel, parseLogLevel, type LogLevel } from './log-level.ts'

/**
 * The level an app uses: the flag (or option), else $CORDAGE_LOG_LEVEL, else the preset's `logLevel`, else warn.
 * @throws CordageError `invalid_input` for an unknown level in the variable (the flag and the preset are checked where they are read)
 */
export function effectiveLogLevel(
  given: LogLevel | undefined,
  preset: LogLevel | undefined,
  env: NodeJS.ProcessEnv = process.env,
): LogLevel {
  if (given) return given
  const fromEnv = env.CORDAGE_LOG_LEVEL
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseLogLevel(fromEnv.trim(), 'CORDAGE_LOG_LEVEL')
  return preset ?? DefaultLogLevel
}

/** Where one app's log lines go. */
export interface LogSink {
  level: LogLevel
  /** One finished line, without its newline. */
  write(line: string): void
  /** Applied to each line before it is written: the app's secrets. */
  scrubber?: Scrubber
}

/** Longer lines are cut (after scrubbing). */
const MaxLine = 8192
const Rank: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }
const sinks = new WeakMap<object, LogSink>()
let installed = false

/**
 * Send the logs of every context under `root` to `sink` (and no longer to reggol's own targets).
 * @returns detach: the root's records are printed by reggol's targets again
 */
export function attachLogSink(root: Context, sink: LogSink): () => void {
  install()
  const key = rootOf(root)
  sinks.set(key, sink)
  return () => {
    if (sinks.get(key) === sink) sinks.delete(key)
  }
}

function rootOf(ctx: Context): object {
  // Contexts are proxies around one root; `root` is the same object from any of them.
  return (ctx as { root?: object }).root ?? ctx
}

function sinkOf(record: Logger.Record): LogSink | undefined {
  const ctx = (record.meta as { ctx?: Context } | undefined)?.ctx
  return ctx ? sinks.get(rootOf(ctx)) : undefined
}

/** Once per process: put the router first; it wraps every other target (also those added later). */
function install(): void {
  if (installed) return
  installed = true
  Logger.targets.unshift(router)
  wrapTargets()
}

const router = {
  // Every record reaches the router; each app's own level is applied in route() (reggol's own
  // levels cannot tell info from warn: both are 2). No cut by reggol: a cut could split a secret
  // before the scrubber sees it, so lines are cut after scrubbing.
  levels: { base: Logger.DEBUG },
  colors: 0,
  maxLength: Infinity,
  record: route,
} as Logger.Target
const wrapped = new WeakSet<Logger.Target>([router])

/** Replace each target not yet wrapped by one that skips attached apps' records. */
function wrapTargets(): void {
  const targets = Logger.targets
  for (let i = 0; i < targets.length; i++) if (!wrapped.has(targets[i])) targets[i] = bypassing(targets[i])
}

/** A target that behaves as `target` for every record that is not an attached app's. */
function bypassing(target: Logger.Target): Logger.Target {
  const wrapper: Logger.Target = Object.create(target)
  wrapper.record = (record) => {
    if (sinkOf(record)) return
    if (target.record) target.record(record)
    else
      (target.print ?? console.log)((Logger as unknown as { render(t: Logger.Target, r: Logger.Record): string }).render(wrapper, record))
  }
  wrapped.add(wrapper)
  return wrapper
}

function route(record: Logger.Record): void {
  // A target added since (reggol visits the targets after the router, in order) is wrapped before it sees this record.
  wrapTargets()
  const sink = sinkOf(record)
  if (!sink) return
  // cordis reports plugin failures and its own warnings under "app"; the host already turns those into
  // CordageErrors naming the plugin, so they show at debug only.
  const cordis = record.name === 'app' || record.name.startsWith('app:')
  const level: LogLevel = cordis
    ? 'debug'
    : record.type === 'error'
      ? 'error'
      : record.type === 'warn'
        ? 'warn'
        : record.type === 'debug'
          ? 'debug'
          : 'info'
  if (Rank[level] > Rank[sink.level]) return
  const text = `${level} [${cordis ? 'cordis' : label(record)}] ${oneLine(record.content)}`
  const scrubbed = sink.scrubber?.active ? sink.scrubber.scrubText(text) : text
  try {
    sink.write(scrubbed.length > MaxLine ? `${scrubbed.slice(0, MaxLine)}… (${scrubbed.length - MaxLine} more characters)` : scrubbed)
  } catch {
    // A log line that cannot be written (a closed pipe) must not fail the plugin that logged it.
  }
}

/** `agent/plugin`, and the logger's name after a colon when it is not the plugin's. */
function label(record: Logger.Record): string {
  const ctx = (record.meta as { ctx?: Context }).ctx as (Context & { [AgentKey]?: string }) | undefined
  const agent = ctx?.[AgentKey]
  const plugin = ctx ? pluginOf(ctx)?.replace(/@[^@]*$/, '') : undefined
  const name = plugin ? (record.name === plugin ? plugin : `${plugin}:${record.name}`) : record.name
  return agent ? `${agent}/${name}` : name
}

/** One line: line breaks (a stack) are shown as `\n`, control characters dropped. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\r?\n/g, '\\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
}
