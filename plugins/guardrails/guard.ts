/**
 * @module guardrails/guard
 * The guardrail service: runs the configured detectors over the content of one stage, and turns what
 * they found into one verdict. A block wins over a redact; a redact replaces every match of every
 * redacting detector at once (where two detectors claim the same characters, the one listed first
 * keeps them). Reasons name the kinds and counts found, and where; never the matched text.
 */
import {
  globPattern,
  hashArgs,
  safeRegex,
  type Glob,
  type SafeRegex,
  type GuardInput,
  type GuardrailService,
  type GuardStage,
  type GuardVerdict,
} from 'cordage'
import { Builtins, BuiltinNames, patternDetector, type Detector, type Span } from './detectors.ts'
import { DetectorDefaults, type Config, type DetectorOptions, type GuardAction } from './manifest.ts'

/** One detector as configured: where it looks and what a hit does. */
export interface Guard {
  detector: Detector
  stages: ReadonlySet<GuardStage>
  action: GuardAction
  replacement: string
  /** Its place in the order of precedence: claims overlapping text before guards of a higher rank. */
  rank: number
}

interface Exempt {
  tools: Glob[]
  detectors: Set<string>
  stages: Set<GuardStage>
}

interface Hit {
  guard: Guard
  span: Span
  /** Where the span is, as shown in a reason: the argument path at tool_input. */
  where: string
}

export class Guardrails implements GuardrailService {
  readonly version: string
  private exempt: Exempt[]

  /** `guards` in the order they claim overlapping text; build them with {@link compileGuards}. */
  constructor(
    config: Config,
    pluginVersion: string,
    readonly guards: readonly Guard[] = compileGuards(config),
  ) {
    this.version = `guardrails@${pluginVersion}+${hashArgs(config).slice(7, 15)}`
    this.exempt = config.exempt.map((e) => ({
      tools: (Array.isArray(e.tool) ? e.tool : [e.tool]).map(globPattern),
      detectors: new Set(e.detectors),
      stages: new Set(e.stages),
    }))
  }

  check(input: GuardInput): GuardVerdict {
    const guards = this.guards.filter((g) => g.stages.has(input.stage) && !this.isExempt(g, input))
    if (guards.length === 0) return { action: 'pass' }
    if (input.stage === 'tool_input') return this.checkArgs(guards, input.args)
    if (typeof input.text !== 'string') return { action: 'pass' }
    return this.checkText(guards, input.stage, input.text, input.tool?.name)
  }

  private isExempt(guard: Guard, input: GuardInput): boolean {
    if (!input.tool || input.stage === 'answer') return false
    const tool = input.tool.name
    return this.exempt.some(
      (e) =>
        e.stages.has(input.stage) && (e.detectors.has('*') || e.detectors.has(guard.detector.name)) && e.tools.some((t) => t.test(tool)),
    )
  }

  /** Arguments are never changed (the call that runs is the one policy judged): any hit blocks. */
  private checkArgs(guards: readonly Guard[], args: unknown): GuardVerdict {
    const hits: Hit[] = []
    for (const { path, text } of stringsOf(args)) hits.push(...claim(guards, text).map((h) => ({ ...h, where: showPath(path, guards) })))
    if (hits.length === 0) return { action: 'pass' }
    const paths = [...new Set(hits.map((h) => h.where))]
    return { action: 'block', guard: names(hits), reason: `found ${summary(hits)} in the arguments (${paths.join(', ')})` }
  }

  private checkText(guards: readonly Guard[], stage: GuardStage, text: string, tool: string | undefined): GuardVerdict {
    const hits = claim(guards, text)
    if (hits.length === 0) return { action: 'pass' }
    const where = stage === 'answer' ? 'in the answer' : `in the result of ${tool ?? 'the tool'}`
    const blocking = hits.filter((h) => h.guard.action === 'block')
    if (blocking.length) return { action: 'block', guard: names(blocking), reason: `found ${summary(hits)} ${where}` }
    let out = ''
    let at = 0
    for (const { guard, span } of hits) {
      out += text.slice(at, span.start) + guard.replacement
      at = span.end
    }
    return { action: 'redact', guard: names(hits), reason: `redacted ${summary(hits)} ${where}`, text: out + text.slice(at) }
  }
}

/** The enabled detectors in their order of precedence: built-ins as listed, then the custom patterns. */
export function compileGuards(config: Config, patterns: ReadonlyMap<string, SafeRegex> = new Map()): Guard[] {
  const guards: Guard[] = []
  for (const name of BuiltinNames) {
    const setting = config.detectors[name]
    if (setting === false || (typeof setting === 'object' && !setting.enabled)) continue
    const d = DetectorDefaults[name]
    const options: DetectorOptions = setting === true ? { enabled: true, stages: d.stages, action: d.action } : setting
    const detector = Builtins[name]
    guards.push({
      detector,
      stages: new Set(options.stages),
      action: options.action,
      replacement: options.replacement ?? `[redacted:${detector.kind}]`,
      rank: guards.length,
    })
  }
  for (const p of config.patterns) {
    // On the linear-time engine: a custom pattern runs on text the model and the tools control.
    const regex = patterns.get(p.name) ?? safeRegex(p.pattern, p.flags ?? '')
    guards.push({
      detector: patternDetector(p.name, regex),
      stages: new Set(p.stages),
      action: p.action,
      replacement: p.replacement ?? `[redacted:${p.name}]`,
      rank: guards.length,
    })
  }
  return guards
}

/** Every guard's spans in `text`, without overlaps: a span overlapping one of an earlier guard is dropped. */
function claim(guards: readonly Guard[], text: string): Omit<Hit, 'where'>[] {
  const taken: Omit<Hit, 'where'>[] = []
  for (const guard of guards) {
    for (const span of guard.detector.find(text)) {
      if (!taken.some((t) => span.start < t.span.end && t.span.start < span.end)) taken.push({ guard, span })
    }
  }
  return taken.sort((a, b) => a.span.start - b.span.start)
}

/**
 * `items[0].note` for a reason. A key is shown only when it looks like a field name and no guard finds
 * anything in it: a key can hold the secret itself, and the reason must never.
 */
function showPath(path: readonly (string | number)[], guards: readonly Guard[]): string {
  if (path.length === 0) return '(arguments)'
  return path
    .map((p, i) => {
      if (typeof p === 'number') return `[${p}]`
      const safe = /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/.test(p) && guards.every((g) => g.detector.find(p).length === 0)
      return `${i ? '.' : ''}${safe ? p : '<key>'}`
    })
    .join('')
}

/** Hits in the order of their guards (the config's order), then of the text. */
function byGuard<T extends Omit<Hit, 'where'>>(hits: readonly T[]): T[] {
  return [...hits].sort((a, b) => a.guard.rank - b.guard.rank || a.span.start - b.span.start)
}

/** "2 secret (github token, aws access key id), 1 card": kinds and counts, never the text. */
function summary(hits: readonly Omit<Hit, 'where'>[]): string {
  const byKind = new Map<string, { count: number; labels: Set<string> }>()
  for (const { guard, span } of byGuard(hits)) {
    const entry = byKind.get(guard.detector.kind) ?? { count: 0, labels: new Set() }
    entry.count++
    if (span.label !== guard.detector.kind && span.label !== guard.detector.name) entry.labels.add(span.label)
    byKind.set(guard.detector.kind, entry)
  }
  return [...byKind]
    .map(([kind, { count, labels }]) => `${count} ${kind}${labels.size && kind === 'secret' ? ` (${[...labels].join(', ')})` : ''}`)
    .join(', ')
}

/** The guards that tripped, in their order: the `guard` of the verdict. */
function names(hits: readonly Omit<Hit, 'where'>[]): string {
  return [...new Set(byGuard(hits).map((h) => h.guard.detector.name))].join(',')
}

/** One string of the arguments and where it is: the keys and indices leading to it. */
export interface ArgString {
  path: (string | number)[]
  text: string
}

/**
 * Every string in a JSON value, in document order: object keys, string values, and numbers in their
 * decimal form (a card number sent as a number is still a card number). Iterative, so deep nesting
 * cannot overflow the stack.
 */
export function stringsOf(value: unknown): ArgString[] {
  const out: ArgString[] = []
  type Item = { path: (string | number)[]; value: unknown } | ArgString
  const stack: Item[] = [{ path: [], value }]
  while (stack.length) {
    const item = stack.pop()!
    if ('text' in item) {
      out.push(item)
      continue
    }
    const { path, value: v } = item
    if (typeof v === 'string') out.push({ path, text: v })
    else if (typeof v === 'number' || typeof v === 'bigint') out.push({ path, text: String(v) })
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push({ path: [...path, i], value: v[i] })
    else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]
        stack.push({ path: [...path, key], value: child })
        stack.push({ path: [...path, key], text: key })
      }
    }
  }
  return out
}
