import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Usage {
  inputTokens: number
  outputTokens: number
  costUsd: number
}
export interface ScriptCall {
  tool: string
  args?: unknown
}
/** One scripted model answer. Exactly one of tool, calls, final, ask. */
export interface ScriptEntry {
  tool?: string
  args?: unknown
  calls?: ScriptCall[]
  final?: string
  ask?: string
  /** Use this entry for this many consecutive steps. */
  repeat?: number
  /** Fail the first `times` attempts of this step with `code` before answering. */
  failFirst?: { code: 'model_transient' | 'model_permanent'; times: number }
  usage?: Partial<Usage>
  delayMs?: number
}

export interface Config {
  script: ScriptEntry[]
  summaries: string[]
  file?: string
  usage: Usage
  delayMs: number
  onExhausted: 'fail' | 'repeat-last'
  recordRequests: number
  measureInput: boolean
  /** Declared output cap per call: a run with a token or cost budget reserves it before each call. */
  maxOutputTokens?: number
  /** Declared prices (US dollars per million tokens): a reservation estimates a call's cost from them. */
  prices?: { inputPerMTok: number; outputPerMTok: number }
}

const usage = Schema.object({
  inputTokens: Schema.natural().default(0),
  outputTokens: Schema.natural().default(0),
  costUsd: Schema.number().min(0).default(0),
})

const entry = Schema.object({
  tool: Schema.string().description('Call one tool.'),
  args: Schema.any().description('Arguments of that call.'),
  calls: Schema.union([
    Schema.const(undefined as never),
    Schema.array(Schema.object({ tool: Schema.string().required(), args: Schema.any() })),
  ]).description('Call several tools in one step.'),
  final: Schema.string().description('Give this final answer.'),
  ask: Schema.string().description('Ask the user this question.'),
  repeat: Schema.natural().min(1).description('Use this entry for this many steps in a row.'),
  // An optional object: schemastery would otherwise check an absent one as {} and demand its fields.
  failFirst: Schema.union([
    Schema.const(undefined as never),
    Schema.object({
      code: Schema.union(['model_transient', 'model_permanent']).required(),
      times: Schema.natural().min(1).required(),
    }),
  ]).description('Fail the first attempts of the step before answering.'),
  usage: Schema.union([
    Schema.const(undefined as never),
    Schema.object({ inputTokens: Schema.natural(), outputTokens: Schema.natural(), costUsd: Schema.number().min(0) }),
  ]),
  delayMs: Schema.natural(),
})

export default {
  name: 'model-scripted',
  version: '1.2.0',
  description: 'A deterministic model that answers from a script. The test and demo default; no network.',
  provides: { model: '1.1.0' },
  config: Schema.object({
    script: Schema.array(entry).default([]).description('The answers, in order, one per model call.'),
    summaries: Schema.array(String)
      .default([])
      .description('Answers to summary requests (purpose "summary", from a compactor), in order per run; the last one repeats.'),
    file: Schema.string().description('A YAML or JSON file holding the script (relative to the preset). Used when `script` is empty.'),
    usage: usage
      .default({ inputTokens: 0, outputTokens: 0, costUsd: 0 })
      .description('Usage reported per call unless an entry says otherwise.'),
    delayMs: Schema.natural().default(0).description('Wait this long before each answer (honours cancellation).'),
    onExhausted: Schema.union(['fail', 'repeat-last']).default('fail').description('What to do when the script has no more entries.'),
    recordRequests: Schema.natural().default(1000).description('How many received requests to keep for inspection.'),
    measureInput: Schema.boolean()
      .default(false)
      .description(
        'Report input tokens as an estimate of what each request held (messages and tool schemas) instead of the configured figure, so a bigger prompt costs more tokens (tool exposure in `cordage eval --vary tools=...`).',
      ),
    maxOutputTokens: Schema.natural().description(
      'Declare this output cap per call (ModelService.maxOutputTokens): a run with a token or cost budget reserves the context plus this before each call, and suspends with reservation_refused when it does not fit.',
    ),
    // An optional object: schemastery would otherwise check an absent one as {} and demand its fields.
    prices: Schema.union([
      Schema.const(undefined as never),
      Schema.object({ inputPerMTok: Schema.number().min(0).required(), outputPerMTok: Schema.number().min(0).required() }),
    ]).description('Declare prices (US dollars per million tokens): a reservation estimates the cost of a call from them.'),
  }),
} satisfies Manifest
