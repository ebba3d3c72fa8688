/**
 * A run id becomes a directory name, so it is checked first: only letters, digits, `_` and `-`. That
 * rules out separators, `..` and anything a shell or another platform would read differently; kernel
 * run ids (`run_<time>_<random>`) always pass.
 */
import { CordageError } from 'cordage'

const RunIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

/** The run id, unchanged, or CordageError `invalid_input` when it could name another directory. */
export function checkRunId(runId: string): string {
  if (typeof runId !== 'string' || !RunIdPattern.test(runId)) {
    throw new CordageError(
      'invalid_input',
      `workspace-local: run id ${JSON.stringify(runId)} cannot name a workspace; run ids are letters, digits, "_" and "-" (at most 128)`,
    )
  }
  return runId
}
