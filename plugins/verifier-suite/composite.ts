/**
 * `all` and `any`. Children run one after another, in the order given, so cheap checks listed first
 * spare an expensive command when they already fail. A composite carries the sealing of its children:
 * if a sealed child is part of the failure, the composite's `feedback` uses that child's feedback in
 * place of its diagnostics.
 */
import type { Check, CheckFailure, CheckInput, CheckResult } from './check.ts'

/** Every child must pass; the first failure is the verdict (with the evidence gathered before it). */
export class AllCheck implements Check {
  constructor(
    readonly label: string,
    private children: Check[],
  ) {}

  async run(input: CheckInput): Promise<CheckResult> {
    const evidence = []
    for (const child of this.children) {
      input.signal.throwIfAborted()
      const result = await child.run(input)
      if (!result.ok) return { ...result, evidence: [...evidence, ...result.evidence] }
      evidence.push(...result.evidence)
    }
    return { ok: true, evidence }
  }
}

/** One child must pass; tried in order, the first that passes is the verdict. */
export class AnyCheck implements Check {
  constructor(
    readonly label: string,
    private children: Check[],
  ) {}

  async run(input: CheckInput): Promise<CheckResult> {
    const failures: CheckFailure[] = []
    for (const child of this.children) {
      input.signal.throwIfAborted()
      const result = await child.run(input)
      if (result.ok) return result
      failures.push(result)
    }
    const intro = `${this.label}: none of the ${failures.length} alternatives passed:`
    const list = (text: (f: CheckFailure) => string) => `${intro} ${failures.map((f, i) => `(${i + 1}) ${text(f)}`).join(' ')}`
    return {
      ok: false,
      code: failures.every((f) => f.code === 'missing_evidence') ? 'missing_evidence' : 'verification_failed',
      reason: list((f) => f.reason),
      feedback: failures.some((f) => f.feedback !== undefined) ? list((f) => f.feedback ?? f.reason) : undefined,
      // Fixing any one alternative is enough.
      repairable: failures.some((f) => f.repairable),
      evidence: failures.flatMap((f) => f.evidence),
    }
  }
}
