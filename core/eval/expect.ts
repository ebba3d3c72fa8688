/**
 * @module eval/expect
 * A case's expectations checked against what a run did. Each expectation becomes one {@link Check}
 * with what was expected and what was seen, in words a person reads in the table. Problems that would
 * make an expectation unable to fail (an event type that does not exist, a bound with no limit) or
 * unable to run (a pattern that does not compile) are found by {@link validateExpect} when the case is
 * loaded, not when it is checked.
 */
import type { RunStatus } from '../contracts/data.ts'
import { RunEventTypes, type RunEvent } from '../contracts/events.ts'
import { regexProblem, safeRegex } from '../kit/regex.ts'
import { Codes } from '../contracts/errors.ts'
import { closest } from '../kit/closest.ts'
import type { Bound, Expect } from './case.ts'
import type { Check } from './result.ts'

/** What a run did, as the expectations see it. */
export interface Observed {
  status: RunStatus
  failureCode?: string
  answer?: string
  steps: number
  tokens: number
  costUsd: number
  events: RunEvent[]
  /** Counted from the tools' own records, by record name. */
  sideEffects: Record<string, number>
  duplicates: Record<string, number>
}

/** `tool/start` or `tool/start[record_followup]`: an event type, narrowed to one tool's events. */
interface Selector {
  text: string
  type: string
  tool?: string
  /** `tool/error:tool_timeout`: only events whose data carries this failure code. */
  code?: string
}

const SelectorPattern = /^([a-z]+\/[a-z-]+)(?:\[([^\]]+)\])?(?::([a-z_]+))?$/

function parseSelector(text: string): Selector | undefined {
  const m = SelectorPattern.exec(text.trim())
  return m ? { text: text.trim(), type: m[1], tool: m[2], code: m[3] } : undefined
}

/** The problems of a selector: a type that is not in the catalogue, or a tool on an event that has none. */
function selectorProblems(text: string, where: string): string[] {
  const selector = parseSelector(text)
  if (!selector)
    return [
      `${where}: "${text}" is not an event selector; write TYPE, TYPE[tool] or TYPE[tool]:code, such as tool/start[record_followup] or tool/error:tool_timeout`,
    ]
  if (!(RunEventTypes as readonly string[]).includes(selector.type)) {
    const near = RunEventTypes.filter((t) => t.split('/')[0] === selector.type.split('/')[0])
    return [
      `${where}: "${selector.type}" is not a run event type (${near.length ? `${selector.type.split('/')[0]}/ events are ${near.join(', ')}` : `known types: ${RunEventTypes.join(', ')}`})`,
    ]
  }
  if (selector.tool !== undefined && !selector.type.startsWith('tool/'))
    return [`${where}: "${text}" names a tool, but ${selector.type} is not a tool event; only tool/ events can be narrowed to one tool`]
  if (selector.code !== undefined && !Object.hasOwn(Codes, selector.code)) {
    const near = closest(selector.code, Object.keys(Codes))
    return [
      `${where}: "${selector.code}" is not an error code${near ? ` (did you mean ${near}?)` : ''}; docs/reference/errors.md lists them`,
    ]
  }
  return []
}

/** A pattern that matches the empty answer and an unrelated one matches anything a model could say. */
function matchesAnything(pattern: string): boolean {
  try {
    const regex = safeRegex(pattern)
    return regex.test('') && regex.test('an unrelated answer, 42 [source: nowhere]')
  } catch {
    return false
  }
}

function boundProblems(bound: Bound | undefined, where: string): string[] {
  if (bound === undefined || typeof bound === 'number') return []
  if (bound.min === undefined && bound.max === undefined)
    return [`${where}: {} sets no limit, so it can never fail; give min, max or a number`]
  if (bound.min !== undefined && bound.max !== undefined && bound.min > bound.max)
    return [`${where}: min ${bound.min} is above max ${bound.max}, so it can never hold`]
  return []
}

/**
 * What is wrong with a case's expectations, each naming the key: an unknown event type, a selector
 * that cannot be narrowed, an order whose two sides are the same, a bound that cannot fail or cannot
 * hold, an answer pattern the linear-time engine refuses. Empty when the expectations can be checked.
 */
export function validateExpect(expect: Expect): string[] {
  const problems: string[] = []
  const { events, answer } = expect
  for (const [i, text] of (events?.includes ?? []).entries()) problems.push(...selectorProblems(text, `expect.events.includes[${i}]`))
  for (const [i, text] of (events?.excludes ?? []).entries()) problems.push(...selectorProblems(text, `expect.events.excludes[${i}]`))
  for (const [text, bound] of Object.entries(events?.count ?? {})) {
    problems.push(...selectorProblems(text, `expect.events.count["${text}"]`))
    problems.push(...boundProblems(bound, `expect.events.count["${text}"]`))
  }
  for (const [i, text] of (events?.order ?? []).entries()) {
    const sides = text.split('<')
    const where = `expect.events.order[${i}]`
    if (sides.length !== 2) {
      problems.push(`${where}: "${text}" must be "A < B"`)
      continue
    }
    const found = sides.flatMap((side) => selectorProblems(side, where))
    problems.push(...found)
    if (!found.length && sides[0].trim() === sides[1].trim())
      problems.push(`${where}: "${text}" orders an event before itself, which can never hold`)
  }
  const problem = answer?.matches === undefined ? undefined : regexProblem(answer.matches)
  if (problem) problems.push(`expect.answer.matches: ${problem}`)
  else if (answer?.matches !== undefined && matchesAnything(answer.matches))
    problems.push(
      `expect.answer.matches: /${answer.matches}/ matches any answer (the empty one too), so it can never fail; anchor it or say what must be there`,
    )
  for (const key of ['includes', 'excludes'] as const)
    for (const [i, text] of (answer?.[key] ?? []).entries())
      if (!text.trim()) problems.push(`expect.answer.${key}[${i}]: an empty string is in every answer, so it checks nothing`)
  // An empty group checks nothing: most likely its keys went elsewhere by mistake.
  if (answer && !Object.values(answer).some((v) => v !== undefined))
    problems.push('expect.answer: {} checks nothing; give includes, excludes or matches, or remove it')
  if (events && !Object.values(events).some((v) => v !== undefined))
    problems.push('expect.events: {} checks nothing; give includes, excludes, order or count, or remove it')
  for (const group of ['sideEffects', 'duplicates'] as const)
    if (expect[group] && !Object.keys(expect[group]!).length)
      problems.push(`expect.${group}: {} checks nothing; name a record or remove it`)
  if (events?.count && !Object.keys(events.count).length)
    problems.push('expect.events.count: {} checks nothing; name an event or remove it')
  // An empty list checks nothing: most likely a list whose items went elsewhere by mistake.
  for (const [key, list] of Object.entries({
    'answer.includes': answer?.includes,
    'answer.excludes': answer?.excludes,
    'events.includes': events?.includes,
    'events.excludes': events?.excludes,
    'events.order': events?.order,
  }))
    if (list?.length === 0) problems.push(`expect.${key}: an empty list checks nothing; remove it or name what to check`)
  for (const key of ['steps', 'tokens', 'costUsd'] as const) problems.push(...boundProblems(expect[key], `expect.${key}`))
  for (const group of ['sideEffects', 'duplicates'] as const)
    for (const [name, bound] of Object.entries(expect[group] ?? {})) problems.push(...boundProblems(bound, `expect.${group}.${name}`))
  return problems
}

/**
 * Check every expectation of a case against what the run did: one Check each, in the order of the
 * case format (status, failure code, answer, side effects, duplicates, events, steps, tokens, cost).
 * Call {@link validateExpect} first: a selector or pattern it refuses is reported here as a failed
 * check, never skipped.
 */
export function checkExpectations(expect: Expect, seen: Observed): Check[] {
  const checks: Check[] = []
  const add = (name: string, ok: boolean, expected: string, actual: string) => checks.push({ name, ok, expected, actual })

  if (expect.status !== undefined) add('status', seen.status === expect.status, expect.status, seen.status)
  if (expect.failureCode !== undefined)
    add('failureCode', seen.failureCode === expect.failureCode, expect.failureCode, seen.failureCode ?? 'none')

  const answer = expect.answer
  if (answer?.includes !== undefined) {
    const missing = answer.includes.filter((s) => seen.answer === undefined || !seen.answer.includes(s))
    add(
      'answer.includes',
      missing.length === 0,
      `contains ${quoteList(answer.includes)}`,
      seen.answer === undefined
        ? 'no answer'
        : missing.length
          ? `lacks ${quoteList(missing)}: ${shorten(seen.answer)}`
          : 'contains them all',
    )
  }
  if (answer?.excludes !== undefined) {
    const present = answer.excludes.filter((s) => seen.answer?.includes(s))
    add(
      'answer.excludes',
      present.length === 0,
      `contains none of ${quoteList(answer.excludes)}`,
      seen.answer === undefined
        ? 'no answer'
        : present.length
          ? `contains ${quoteList(present)}: ${shorten(seen.answer)}`
          : 'contains none',
    )
  }
  if (answer?.matches !== undefined) {
    let matched = false
    let actual: string
    try {
      matched = seen.answer !== undefined && safeRegex(answer.matches).test(seen.answer)
      actual = seen.answer === undefined ? 'no answer' : `${matched ? 'matches' : 'does not match'}: ${shorten(seen.answer)}`
    } catch (error) {
      actual = `the pattern does not compile: ${(error as Error).message}`
    }
    add('answer.matches', matched, `matches /${answer.matches}/`, actual)
  }

  for (const group of ['sideEffects', 'duplicates'] as const) {
    for (const [name, bound] of Object.entries(expect[group] ?? {})) {
      const value = Object.hasOwn(seen[group], name) ? seen[group][name] : undefined
      add(
        `${group}.${name}`,
        value !== undefined && within(value, bound),
        describeBound(bound),
        value === undefined ? `no record named "${name}" was counted` : number(value),
      )
    }
  }

  const events = expect.events
  if (events) {
    const tools = toolsByAction(seen.events)
    const firstOf = (text: string) => {
      const selector = parseSelector(text)
      return selector ? seen.events.find((e) => matches(e, selector, tools)) : undefined
    }
    if (events.includes !== undefined) {
      const missing = events.includes.filter((text) => !firstOf(text))
      add(
        'events.includes',
        missing.length === 0,
        `has ${events.includes.join(', ')}`,
        missing.length ? `no ${missing.join(', ')}` : 'has them all',
      )
    }
    if (events.excludes !== undefined) {
      const found = events.excludes.flatMap((text) => {
        // A selector that can match nothing would make this check pass whatever happened.
        const invalid = selectorProblems(text, 'selector')
        if (invalid.length) return invalid
        const event = firstOf(text)
        return event ? [`${text.trim()} at seq ${event.seq}`] : []
      })
      add('events.excludes', found.length === 0, `has none of ${events.excludes.join(', ')}`, found.length ? found.join(', ') : 'has none')
    }
    for (const [text, bound] of Object.entries(events.count ?? {})) {
      const selector = parseSelector(text)
      const n = selector ? seen.events.filter((e) => matches(e, selector, tools)).length : Number.NaN
      add(
        `events.count[${text.trim()}]`,
        selector !== undefined && within(n, bound),
        describeBound(bound),
        selector ? number(n) : 'not a selector',
      )
    }
    for (const [i, text] of (events.order ?? []).entries()) {
      const [a, b] = text.split('<').map((s) => s.trim())
      const first = firstOf(a)
      const second = firstOf(b)
      const where = (s: string, e: RunEvent | undefined) => (e ? `${s} at seq ${e.seq}` : `no ${s}`)
      add(
        `events.order[${i}]`,
        first !== undefined && second !== undefined && first.seq < second.seq,
        `${a} before ${b}`,
        `${where(a, first)}, ${where(b, second)}`,
      )
    }
  }

  for (const key of ['steps', 'tokens', 'costUsd'] as const) {
    const bound = expect[key]
    if (bound !== undefined) add(key, within(seen[key], bound), describeBound(bound), number(seen[key]))
  }
  return checks
}

/**
 * The tool each action called, from the events that name it: tool/decision and tool/approval-decided
 * carry only the action's id, and `tool/decision[record_followup]` should still find them.
 */
function toolsByAction(events: RunEvent[]): Map<string, string> {
  const tools = new Map<string, string>()
  for (const event of events) {
    const tool = (event.data as { tool?: unknown }).tool
    if (event.actionId && typeof tool === 'string' && !tools.has(event.actionId)) tools.set(event.actionId, tool)
  }
  return tools
}

function matches(event: RunEvent, selector: Selector, tools: Map<string, string>): boolean {
  if (event.type !== selector.type) return false
  if (selector.code !== undefined && (event.data as { code?: unknown }).code !== selector.code) return false
  if (selector.tool === undefined) return true
  const tool = (event.data as { tool?: unknown }).tool
  return (typeof tool === 'string' ? tool : event.actionId ? tools.get(event.actionId) : undefined) === selector.tool
}

/**
 * Costs are sums of floats (0.0002 three times is 0.0006000000000000001), so "exactly" allows a
 * difference a billion times smaller than the value; for step and token counts that is none at all.
 */
function same(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))
}

function within(value: number, bound: Bound): boolean {
  if (typeof bound === 'number') return same(value, bound)
  return (
    (bound.min === undefined || value >= bound.min || same(value, bound.min)) &&
    (bound.max === undefined || value <= bound.max || same(value, bound.max))
  )
}

function describeBound(bound: Bound): string {
  if (typeof bound === 'number') return number(bound)
  if (bound.min !== undefined && bound.max !== undefined) return `${number(bound.min)} to ${number(bound.max)}`
  if (bound.min !== undefined) return `at least ${number(bound.min)}`
  if (bound.max !== undefined) return `at most ${number(bound.max)}`
  return 'anything'
}

/** A number as people write it: 0.0006, not 0.0006000000000000001. */
function number(value: number): string {
  return String(Number(value.toPrecision(12)))
}

function quoteList(items: string[]): string {
  return items.map((s) => JSON.stringify(s)).join(', ')
}

function shorten(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ')
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat)
}
