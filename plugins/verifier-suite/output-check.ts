/**
 * The output contract: the final answer has a shape. `json`: the answer (or its last fenced code block)
 * is JSON, and matches a JSON Schema, which is turned into a zod schema once, when the plugin starts.
 * `text`: the answer matches a pattern and fits length bounds.
 */
import { z } from 'zod'
import { CordageError, safeRegex, type Evidence, type SafeRegex } from 'cordage'
import { answerSeq, leafFailure, type Check, type CheckInput, type CheckResult, type LeafTraits } from './check.ts'
import type { OutputSpec } from './config.ts'

/** How many schema problems a reason lists; the rest are counted. */
const MaxIssues = 8

export class OutputCheck implements Check {
  private schema?: z.ZodType
  /** On the linear-time engine: the answer is the model's text, so no pattern may stall on it. */
  private pattern?: SafeRegex

  constructor(
    private leaf: LeafTraits,
    private options: OutputSpec,
    path: string,
  ) {
    if (options.schema) {
      try {
        this.schema = z.fromJSONSchema(options.schema as Parameters<typeof z.fromJSONSchema>[0])
      } catch (error) {
        throw new CordageError(
          'plugin_config_invalid',
          `verifier-suite: ${path ? `${path}.` : ''}output.schema is not a JSON Schema zod can read: ${(error as Error).message}`,
          { cause: error },
        )
      }
    }
    if (options.pattern) this.pattern = safeRegex(options.pattern, options.flags)
  }

  get label() {
    return this.leaf.label
  }

  run({ state, answer }: CheckInput): CheckResult {
    const seq = answerSeq(state)
    return this.options.format === 'json' ? this.json(answer, seq) : this.text(answer, seq)
  }

  private json(answer: string, seq: number | undefined): CheckResult {
    const value = parseJsonAnswer(answer)
    if (!value.ok) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `the answer is not JSON (${value.error})`,
        'Answer with the JSON value alone, or put it in a ```json fenced block.',
      )
    }
    if (!this.schema) return { ok: true, evidence: [{ kind: 'output', ref: 'json', seq }] }
    const parsed = this.schema.safeParse(value.data)
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
      const listed = issues.slice(0, MaxIssues).join('; ') + (issues.length > MaxIssues ? `; and ${issues.length - MaxIssues} more` : '')
      return leafFailure(
        this.leaf,
        'verification_failed',
        `the JSON answer does not match the output contract: ${listed}`,
        'Change the answer so that every listed field fits the contract.',
      )
    }
    return { ok: true, evidence: [{ kind: 'output', ref: 'json matches the output schema', seq }] }
  }

  private text(answer: string, seq: number | undefined): CheckResult {
    const { minLength, maxLength } = this.options
    if (minLength !== undefined && answer.length < minLength) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `the answer has ${answer.length} characters, at least ${minLength} required`,
        'Give a fuller answer.',
      )
    }
    if (maxLength !== undefined && answer.length > maxLength) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `the answer has ${answer.length} characters, at most ${maxLength} allowed`,
        'Shorten the answer.',
      )
    }
    if (this.pattern && !this.pattern.test(answer)) {
      return leafFailure(
        this.leaf,
        'verification_failed',
        `the answer does not match /${this.pattern.source}/`,
        'Write the answer in the form the task asks for.',
      )
    }
    const evidence: Evidence[] = [{ kind: 'output', ref: this.pattern ? `text matches /${this.pattern.source}/` : 'text', seq }]
    return { ok: true, evidence }
  }
}

/** The answer as JSON: the whole answer, or else its last fenced code block. */
export function parseJsonAnswer(answer: string): { ok: true; data: unknown } | { ok: false; error: string } {
  const candidates = [answer.trim()]
  const fenced = [...answer.matchAll(/```[a-zA-Z]*\n([\s\S]*?)```/g)]
  if (fenced.length) candidates.push(fenced[fenced.length - 1][1].trim())
  let error = ''
  for (const text of candidates) {
    try {
      return { ok: true, data: JSON.parse(text) }
    } catch (e) {
      error ||= (e as Error).message
    }
  }
  return { ok: false, error }
}
