/**
 * @module eval/result
 * What `cordage eval` produces: one record per case and variant, a summary per variant, and the
 * difference from a baseline. This is also the JSON written by `--json` / `--out` and read back by
 * `--baseline`, so it carries a format number and is checked when read (eval/baseline.ts).
 */
import type { RunStatus } from '../contracts/data.ts'

export const ResultFormat = 1

/** One way of running the suite: the preset as it is, or with one thing changed. */
export interface Variant {
  /** Short and unique: `full`, `-verifier`, `maxSteps=3`, `tools=200`, `policy-rules@2.0.0`. */
  id: string
  kind: 'full' | 'ablate' | 'vary' | 'plugin'
  /** What was changed, in words, for the report. */
  label: string
  /** `ablate`: the mechanism or plugin switched off. */
  mechanism?: string
  /** `vary`: the axis (`maxSteps`, `tools`, `PLUGIN.key`) and its value. */
  axis?: string
  value?: string | number
  /** `plugin`: the plugin and the range asked for. */
  plugin?: string
  range?: string
  /** `plugin`: its config for this side, given whole; default: the agent's, less what the version does not know. */
  config?: Record<string, unknown>
}

/** One expectation of a case, checked. */
export interface Check {
  /** `status`, `failureCode`, `answer.includes`, `sideEffects.followups`, `events.order[0]`, ... */
  name: string
  ok: boolean
  expected: string
  actual: string
}

export interface CaseRun {
  case: string
  /** The case file, as shown (relative to the working directory). */
  file: string
  variant: string
  /** Every expectation held. */
  ok: boolean
  checks: Check[]
  /** The case could not run (its preset was refused, a plugin failed to start): code and message. */
  error?: { code: string; message: string }
  runId?: string
  status?: RunStatus
  failureCode?: string
  answer?: string
  /** Ended COMPLETED with an answer that meets the case's answer expectation (if it has one). */
  verifiedSuccess: boolean
  steps: number
  tokens: number
  costUsd: number
  /** From the run's start to where it stood at the end, pauses answered included (ms). */
  latencyMs: number
  /** Loading the preset and plugins for this case (ms). */
  startupMs: number
  /** Counted from the tools' own records, by record name. */
  sideEffects: Record<string, number>
  duplicates: Record<string, number>
  /** The run's event types in order (a tool's name in brackets for tool events). */
  events: string[]
  /** What the reader should know: a variant that changes nothing for this case, faults injected, log lines of a failed case. */
  notes?: string[]
}

export interface VariantSummary {
  variant: string
  cases: number
  /** Cases whose every expectation held. */
  passed: number
  /** Share of cases with a verified success (0..1). */
  verifiedSuccessRate: number
  /** How runs ended that did not complete, by failure code (or status when there is none). */
  failureMix: Record<string, number>
  costUsd: number
  tokens: number
  steps: number
  latencyMs: { p50: number; max: number }
  /** Against the full harness: cases whose outcome differs, in words. */
  changed: string[]
}

export interface BaselineDiff {
  file: string
  /** Passed in the baseline, fails now. */
  regressions: { case: string; variant: string; was: string; now: string }[]
  /** Failed in the baseline, passes now. */
  fixed: { case: string; variant: string }[]
  /** Cases in one and not the other. */
  added: string[]
  removed: string[]
  /** Summary figures that moved, per variant. */
  metrics: { variant: string; field: 'passed' | 'verifiedSuccessRate' | 'costUsd' | 'tokens' | 'latencyP50'; was: number; now: number }[]
}

export interface SuiteResult {
  format: typeof ResultFormat
  /** The suite as named on the command line. */
  suite: string
  /** The preset every case ran on when one was given (`--preset`), as named. */
  preset?: string
  startedAt: string
  durationMs: number
  variants: Variant[]
  runs: CaseRun[]
  summaries: VariantSummary[]
  baseline?: BaselineDiff
}
