/**
 * Reading the check tree from the plugin's config. The tree is recursive, so schemastery cannot
 * describe it; here every node is checked, with defaults filled in, and each problem names its path
 * (`all[2].command.run`) so a preset author can find it. The manifest's schema runs the same check
 * ({@link checkKind}), so `cordage check` reports a problem at the line of its key.
 */
import { z } from 'zod'
import { CordageError, regexProblem } from 'cordage'

const Kinds = ['all', 'any', 'evidence', 'output', 'command'] as const
export type Kind = (typeof Kinds)[number]

const leaf = {
  sealed: z.boolean().default(false),
  feedback: z.string().min(1).optional(),
  repairable: z.boolean().default(true),
}

const regexFlags = z
  .string()
  .regex(/^[imsu]*$/, 'flags may hold i, m, s and u')
  .default('')

/**
 * A pattern runs on the answer, the model's text: it must compile for the linear-time engine
 * (safeRegex), which refuses lookaround and backreferences rather than let a crafted answer stall
 * the process.
 */
const compiles = (o: { pattern?: string; flags: string }, ctx: z.RefinementCtx) => {
  const problem = o.pattern === undefined ? undefined : regexProblem(o.pattern, o.flags)
  if (problem) ctx.addIssue({ code: 'custom', path: ['pattern'], message: problem })
}

const EvidenceSpec = z
  .object({
    pattern: z.string().min(1).default('\\[source: ([^\\]]+)\\]'),
    flags: regexFlags,
    minCount: z.number().int().min(0).default(1),
    mustBeObserved: z.boolean().default(true),
    kind: z.string().min(1).default('citation'),
    ...leaf,
  })
  .strict()
  .superRefine(compiles)

const OutputSpec = z
  .object({
    format: z.enum(['json', 'text']),
    schema: z.record(z.string(), z.unknown()).optional(),
    pattern: z.string().min(1).optional(),
    flags: regexFlags,
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(0).optional(),
    ...leaf,
  })
  .strict()
  .refine((o) => o.format === 'json' || o.schema === undefined, {
    message: 'schema is for format: json; use pattern for text',
    path: ['schema'],
  })
  .refine((o) => o.format === 'text' || (o.pattern === undefined && o.minLength === undefined && o.maxLength === undefined), {
    message: 'pattern, minLength and maxLength are for format: text',
    path: ['format'],
  })
  .superRefine(compiles)

const CommandSpec = z
  .object({
    run: z.union([z.array(z.string().min(1)).min(1), z.string().min(1)]),
    shell: z.boolean().default(false),
    cwd: z.string().min(1).optional(),
    timeoutMs: z.number().int().min(1).default(60_000),
    expectExit: z.number().int().min(0).default(0),
    env: z.record(z.string(), z.string()).default({}),
    inheritEnv: z.boolean().default(false),
    tailChars: z.number().int().min(0).default(2000),
    maxOutput: z.number().int().min(1).default(1_000_000),
    ...leaf,
  })
  .strict()
  // Never a shell by accident: a string is a shell script, so it has to say so.
  .refine((c) => (typeof c.run === 'string') === c.shell, {
    message: 'give run as an argument list ([node, --test]); a string is a shell script and needs shell: true',
    path: ['run'],
  })

export type EvidenceSpec = z.output<typeof EvidenceSpec>
export type OutputSpec = z.output<typeof OutputSpec>
export type CommandSpec = z.output<typeof CommandSpec>

interface Named {
  name?: string
  path: string
}
export type CheckSpec =
  | (Named & { kind: 'all'; children: CheckSpec[] })
  | (Named & { kind: 'any'; children: CheckSpec[] })
  | (Named & { kind: 'evidence'; options: EvidenceSpec })
  | (Named & { kind: 'output'; options: OutputSpec })
  | (Named & { kind: 'command'; options: CommandSpec })

/** The checked tree, or CordageError `plugin_config_invalid` naming the first problem's path. */
export function parseCheckTree(config: unknown): CheckSpec {
  return parseNode(config, '')
}

/**
 * Check the subtree under one top-level key of the config (`all`, `evidence`, ...), for the manifest's
 * schema: throws a TypeError whose message starts with the problem's key path (`$.all[2].command.run`),
 * which is how the host finds the line to report.
 */
export function checkKind(kind: Kind, value: unknown): void {
  try {
    parseNode({ [kind]: value }, '')
  } catch (error) {
    const at = (error as CordageError).data as { path: string; problem: string } | undefined
    if (!at) throw error
    throw new TypeError(`$.${at.path} ${at.problem}`)
  }
}

function parseNode(value: unknown, path: string): CheckSpec {
  const at = path || 'config'
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    invalid(at, `expected a check (an object with one of ${Kinds.join(', ')})`)
  const node = value as Record<string, unknown>
  const present = Object.keys(node).filter((k) => node[k] !== undefined)
  const kinds = present.filter((k): k is Kind => (Kinds as readonly string[]).includes(k))
  const extra = present.filter((k) => k !== 'name' && !kinds.includes(k as Kind))
  if (extra.length)
    invalid(at, `unknown key${extra.length > 1 ? 's' : ''} ${extra.join(', ')}; a check has name and one of ${Kinds.join(', ')}`)
  if (kinds.length !== 1) invalid(at, `expected exactly one of ${Kinds.join(', ')}, found ${kinds.join(', ') || 'none'}`)
  const kind = kinds[0]
  const name = node.name
  if (name !== undefined && (typeof name !== 'string' || !name.trim())) invalid(join(path, 'name'), 'expected a non-empty string')
  const here = join(path, kind)
  const base = { name: name as string | undefined, path }
  if (kind === 'all' || kind === 'any') {
    const list = node[kind]
    if (!Array.isArray(list) || list.length === 0) invalid(here, 'expected a non-empty list of checks')
    return { ...base, kind, children: (list as unknown[]).map((child, i) => parseNode(child, `${here}[${i}]`)) } as CheckSpec
  }
  const schema = { evidence: EvidenceSpec, output: OutputSpec, command: CommandSpec }[kind]
  const parsed = schema.safeParse(node[kind] ?? {})
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const at = [here, ...issue.path.map(String)].join('.')
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys
      invalid(
        `${at}.${keys[0]}`,
        `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}; a${kind === 'evidence' ? 'n' : ''} ${kind} check has ${Object.keys(schema.shape).join(', ')}`,
      )
    }
    invalid(at, issue.message)
  }
  return { ...base, kind, options: parsed.data } as CheckSpec
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key
}

function invalid(path: string, problem: string): never {
  throw new CordageError('plugin_config_invalid', `verifier-suite: ${path}: ${problem}`, { data: { path, problem } })
}
