/**
 * @module eval/case
 * The eval case format (docs/eval.md): one YAML file per case, checked strictly: an unknown key, fault
 * kind or status is an error that names the file, the line and what is allowed, never a case that
 * silently checks less than it says.
 */
import { z } from 'zod'
import { Codes } from '../contracts/errors.ts'
import type { RunStatus } from '../contracts/data.ts'
import { Transitions } from '../index.ts'

/** Every run status: the kernel's table of transitions names each once; a case expecting another is refused. */
export const RunStatuses = Object.keys(Transitions) as [RunStatus, ...RunStatus[]]

const Bound = z
  .union([z.number().min(0), z.object({ min: z.number().min(0).optional(), max: z.number().min(0).optional() }).strict()])
  .describe('a number (exactly) or { min, max }')

const ScriptedModel = z
  .object({
    /** model-scripted entries (plugins/model-scripted/README.md), one per model call. */
    script: z.array(z.record(z.string(), z.unknown())).min(1),
    usage: z
      .object({ inputTokens: z.number().int().min(0), outputTokens: z.number().int().min(0), costUsd: z.number().min(0) })
      .partial()
      .strict()
      .optional(),
    onExhausted: z.enum(['fail', 'repeat-last']).optional(),
  })
  .strict()

/** Faults the engine injects; each names what it breaks. */
export const ToolFaultKinds = ['timeout', 'transient', 'lost-response', 'fail'] as const
export const Fault = z.union([
  z
    .object({
      /** The tool whose calls fail. */
      tool: z.string().min(1),
      kind: z.enum(ToolFaultKinds),
      /** How many calls fail, counted from the first (default 1); `always` for every call. */
      times: z.union([z.number().int().min(1), z.literal('always')]).default(1),
    })
    .strict(),
  z
    .object({
      /** The model call (1-based, counted over the run) that fails, and how often before it answers. */
      model: z.enum(['transient', 'permanent']),
      call: z.number().int().min(1).default(1),
      times: z.number().int().min(1).default(1),
    })
    .strict(),
  z
    .object({
      /**
       * The agent's policy replaced: `malformed` answers a verdict the contract does not know; `allow-all`
       * and `deny-all` answer for every action whatever the preset's rules say (a mismatched policy).
       */
      policy: z.enum(['malformed', 'allow-all', 'deny-all']),
    })
    .strict(),
  z
    .object({
      /** The agent's verifier replaced by one that answers wrongly: `pass` passes anything, `fail` fails anything. */
      verifier: z.enum(['pass', 'fail']),
    })
    .strict(),
])
export type Fault = z.infer<typeof Fault>

const Answer = z.union([
  /** `action`: only the pause on this action (`s1.a1`); the run paused on another is left there. */
  z
    .object({
      approve: z.literal(true),
      by: z.string().min(1).default('eval'),
      reason: z.string().optional(),
      action: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      reject: z.literal(true),
      by: z.string().min(1).default('eval'),
      reason: z.string().optional(),
      action: z.string().min(1).optional(),
    })
    .strict(),
  z.object({ input: z.string() }).strict(),
  /** A person settles an effect the harness could not: whether the call committed (`cordage reconcile`). */
  z.object({ reconcile: z.enum(['committed', 'not-committed']), by: z.string().min(1).default('eval') }).strict(),
])
export type Answer = z.infer<typeof Answer>

const Records = z
  .object({
    /** A JSON-lines file a tool writes (relative to the preset's folder, as the preset's config names it). */
    file: z.string().min(1),
    /** The field that identifies one effect; two lines with the same value are a duplicate. Default: the whole line. */
    key: z.string().min(1).optional(),
  })
  .strict()

const Decision = z.object({ by: z.string().min(1), reason: z.string().optional() }).strict()

/**
 * One call of a recorded run (docs/eval.md, "Replays"): the tool and its arguments (matched by their hash,
 * as approvals are), the person's recorded decision on it, and its recorded result. A call with side
 * effects is answered from `result` instead of running; the decision is given again as `replay:NAME`.
 */
export const RecordedCall = z
  .object({
    tool: z.string().min(1),
    args: z.unknown().default({}),
    approved: Decision.optional(),
    rejected: Decision.optional(),
    /** What the call returned in the recording: the output, the model's observation of it, the receipt. */
    result: z
      .object({ output: z.unknown().optional(), observation: z.string().optional(), receipt: z.unknown().optional() })
      .strict()
      .optional(),
    /** Where it was recorded, for people (`run r_… s1.a1`); default: the case. */
    from: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => !(c.approved && c.rejected), 'a recorded call was approved or rejected, not both')
  .refine((c) => c.approved || c.rejected || c.result, 'a recorded call needs its decision (approved, rejected), its result, or both')
export type RecordedCall = z.infer<typeof RecordedCall>

const EventOrder = z
  .string()
  .regex(
    /^\s*[a-z]+\/[a-z-]+(\[[^\]]+\])?(:[a-z_]+)?\s*<\s*[a-z]+\/[a-z-]+(\[[^\]]+\])?(:[a-z_]+)?\s*$/,
    'expected "TYPE[tool]:code < TYPE[tool]:code" (tool and code optional)',
  )

export const Expect = z
  .object({
    /** Required: a case says where the run must end, so a run that failed cannot pass on its other checks. */
    status: z.enum(RunStatuses),
    failureCode: z.enum(Object.keys(Codes) as [string, ...string[]]).optional(),
    answer: z
      .object({ includes: z.array(z.string()).optional(), excludes: z.array(z.string()).optional(), matches: z.string().optional() })
      .strict()
      .optional(),
    /** Effects counted from the tools' own records (`records:`), by record name. */
    sideEffects: z.record(z.string(), Bound).optional(),
    /** Records that share a key, by record name (default expectation when records are named: none). */
    duplicates: z.record(z.string(), Bound).optional(),
    events: z
      .object({
        includes: z.array(z.string()).optional(),
        excludes: z.array(z.string()).optional(),
        /** "A < B": the first A comes before the first B; `tool/started[record_followup]` narrows to one tool. */
        order: z.array(EventOrder).optional(),
        /** How many events a selector matches: `tool/start[record_followup]: 1`, `tool/error:tool_timeout: { min: 1 }`. */
        count: z.record(z.string(), Bound).optional(),
      })
      .strict()
      .optional(),
    steps: Bound.optional(),
    tokens: Bound.optional(),
    costUsd: Bound.optional(),
  })
  .strict()
export type Expect = z.infer<typeof Expect>
export type Bound = z.infer<typeof Bound>

export const CaseShape = z
  .object({
    eval: z.literal(1),
    name: z.string().min(1).optional(),
    description: z.string().optional(),
    /** The preset (relative to the case file); `cordage eval --preset` replaces it for every case. */
    preset: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    task: z.string().min(1).optional(),
    /** Agent keys merged over the preset's agent by the preset layer rules (docs/reference/presets.md#layers). */
    overlay: z.record(z.string(), z.unknown()).optional(),
    /** The model's decisions; without it the preset's own model answers (a real model, for a live eval). */
    model: ScriptedModel.optional(),
    faults: z.array(Fault).default([]),
    /** How pauses are answered, in order; a pause with no answer left ends the case where it stands. */
    answers: z.array(Answer).default([]),
    records: z.record(z.string(), Records).default({}),
    /**
     * Tools with side effects that run as they are, because their effects stay in the case's copy of
     * the preset's folder (an outbox file, a workspace there). Every other call with side effects is
     * answered from `recorded`, or refused: an evaluation never reaches a real effect.
     */
    sandbox: z.array(z.string().min(1)).default([]),
    /** The recorded calls this case replays: their results and the decisions people gave on them. */
    recorded: z.array(RecordedCall).default([]),
    expect: Expect,
    /** The case's time limit from its run's start (ms; default `--case-timeout`, else 5 minutes): the run is cancelled after it. */
    timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
    /** Run this case alone, never beside another (it measures time, or shares something outside its folder). */
    serial: z.boolean().default(false),
  })
  .strict()
export type CaseShape = z.infer<typeof CaseShape>

/** A case as loaded: its shape, where it came from, and its name. */
export interface EvalCase extends CaseShape {
  name: string
  /** Absolute path of the case file. */
  file: string
  /** As shown in messages and tables: relative to the working directory. */
  shown: string
}
