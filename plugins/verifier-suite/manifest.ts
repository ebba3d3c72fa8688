import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { checkKind, type Kind } from './config.ts'

/** Options every leaf check takes. */
export interface LeafOptions {
  /** The model is told only `feedback` when the check fails; the diagnostics stay in the record. */
  sealed?: boolean
  /** What the model is told when a sealed check fails. */
  feedback?: string
  /** Whether the model may try again after this check failed (while the run's maxRepairs allows). */
  repairable?: boolean
}

export interface EvidenceOptions extends LeafOptions {
  pattern?: string
  flags?: string
  minCount?: number
  mustBeObserved?: boolean
  kind?: string
}

export interface OutputOptions extends LeafOptions {
  format: 'json' | 'text'
  schema?: Record<string, unknown>
  pattern?: string
  flags?: string
  minLength?: number
  maxLength?: number
}

export interface CommandOptions extends LeafOptions {
  run: string[] | string
  shell?: boolean
  cwd?: string
  timeoutMs?: number
  expectExit?: number
  env?: Record<string, string>
  inheritEnv?: boolean
  tailChars?: number
  maxOutput?: number
}

/** One node of the check tree: a composite (`all`, `any`) or a leaf check, with an optional name. */
export type CheckNode = { name?: string } & (
  | { all: CheckNode[] }
  | { any: CheckNode[] }
  | { evidence: EvidenceOptions }
  | { output: OutputOptions }
  | { command: CommandOptions }
)

/** The plugin's config is the root of the check tree. */
export type Config = CheckNode

/** Any value, checked as the subtree of one kind of check (config.ts). */
function checked(kind: Kind) {
  return Schema.transform(Schema.any(), (value: unknown) => {
    if (value !== undefined) checkKind(kind, value)
    return value
  })
}

export default {
  name: 'verifier-suite',
  version: '1.0.0',
  description:
    'A completion contract composed of checks: cited evidence, the shape of the answer, commands run in the workspace (sealed or not), all / any.',
  provides: { verifier: '1.1.0' },
  optional: { workspace: '^1.0.0' },
  // The tree is recursive, which schemastery does not describe; the host checks the top-level keys, and
  // each key's subtree is checked by config.ts (unknown keys, types, patterns), naming the path of the
  // problem so the host reports its line. The plugin checks the whole tree again when it starts.
  config: Schema.object({
    name: Schema.string().description('A name for the root check, used in reasons.'),
    all: checked('all').description('Checks that must all pass, in order; the first failure decides.'),
    any: checked('any').description('Checks of which one must pass, tried in order.'),
    evidence: checked('evidence').description('The answer cites references a tool returned in this run.'),
    output: checked('output').description('The answer has a shape: JSON matching a JSON Schema, or text matching a pattern.'),
    command: checked('command').description("A command run in the run's workspace must exit as expected."),
  }),
} satisfies Manifest
