/**
 * @module eval/gate
 * Which case runs make `cordage eval` fail: one place, so the exit code and the report's red agree.
 * The gated variants are the full harness and every side of `--plugin` (a new version must hold the
 * suite too); ablated and varied variants are measured, not gated: switching a mechanism off is
 * expected to break cases, and that is what the ablation shows. A case that could not run fails the
 * command in any variant: an error is not a measurement.
 */
import type { CaseRun, SuiteResult } from './result.ts'

/** The ids of the variants whose expectations must hold. */
export function gatedVariants(result: Pick<SuiteResult, 'variants'>): Set<string> {
  return new Set(result.variants.filter((v) => v.kind === 'full' || v.kind === 'plugin').map((v) => v.id))
}

/** Whether this run fails the command (without `--regressions-only`): it could not run, or a gated variant's expectation did not hold. */
export function failsCommand(run: CaseRun, gated: Set<string>): boolean {
  return !!run.error || (!run.ok && gated.has(run.variant))
}
