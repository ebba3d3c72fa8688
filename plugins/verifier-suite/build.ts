/** Turning the checked config tree into checks. */
import { labelOf, SealedFeedback, type Check, type LeafTraits } from './check.ts'
import { AllCheck, AnyCheck } from './composite.ts'
import { CommandCheck, type CwdOf } from './command-check.ts'
import type { CheckSpec } from './config.ts'
import { EvidenceCheck } from './evidence-check.ts'
import { OutputCheck } from './output-check.ts'

export interface BuildContext {
  /** Where a command check without `cwd` runs: the run's workspace. */
  workspaceDir: CwdOf
  /** A command check's own `cwd`, made absolute (relative paths follow the preset). */
  resolveCwd(cwd: string): string
}

export function buildCheck(spec: CheckSpec, build: BuildContext): Check {
  const label = labelOf(spec.kind, spec.path, spec.name)
  const leaf = (options: LeafOptions): LeafTraits => ({
    label,
    sealed: options.sealed,
    repairable: options.repairable,
    feedback: options.feedback ?? SealedFeedback,
  })
  switch (spec.kind) {
    case 'all':
      return new AllCheck(
        label,
        spec.children.map((child) => buildCheck(child, build)),
      )
    case 'any':
      return new AnyCheck(
        label,
        spec.children.map((child) => buildCheck(child, build)),
      )
    case 'evidence':
      return new EvidenceCheck(leaf(spec.options), spec.options)
    case 'output':
      return new OutputCheck(leaf(spec.options), spec.options, spec.path)
    case 'command': {
      const { cwd } = spec.options
      const fixed = cwd === undefined ? undefined : build.resolveCwd(cwd)
      return new CommandCheck(leaf(spec.options), spec.options, fixed === undefined ? build.workspaceDir : async () => fixed)
    }
  }
}

type LeafOptions = { sealed: boolean; repairable: boolean; feedback?: string }

/** Whether some command check runs in the workspace (and so needs the `workspace` service). */
export function needsWorkspace(spec: CheckSpec): boolean {
  if (spec.kind === 'all' || spec.kind === 'any') return spec.children.some(needsWorkspace)
  return spec.kind === 'command' && spec.options.cwd === undefined
}
