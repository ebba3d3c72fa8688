/**
 * @module cordage/eval
 * Harness evaluation (docs/eval.md): load a suite of cases, run it under variants (ablations,
 * sensitivity axes, plugin versions), compare with a baseline, render a report. Re-exports only.
 */
export { CaseShape, Fault, Expect, RecordedCall, RunStatuses, type EvalCase } from './case.ts'
export { loadSuite, loadCase } from './load.ts'
export { parseVariants, Mechanisms, type VariantFlags } from './variants.ts'
export { runSuite, summarize, catalogFor, type SuiteOptions } from './suite.ts'
export { runCase, type RunCaseOptions, type Inspected } from './run-case.ts'
export { prune } from './prune.ts'
export { replayLayer, replayedBy, type ReplayLayer, type ReplayPlan, type RecordedDecision } from './replay.ts'
export { renderReport, latestReportPath } from './report.ts'
export type { SuiteResult, CaseRun, Variant, VariantSummary, Check, BaselineDiff } from './result.ts'
