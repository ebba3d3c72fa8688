import { Schema } from 'cordis'
import { checkArgsPatterns, checkLists, type ArgMatcher, type ArgsPattern, type Manifest } from 'cordage'

type SideEffect = 'none' | 'local' | 'external'
type OneOrMany<T> = T | T[]

export interface Match {
  tool?: OneOrMany<string>
  /** The part of a tool name before `__` (mcp-tools names tools `<server>__<tool>`). */
  namespace?: OneOrMany<string>
  sideEffect?: OneOrMany<SideEffect>
  needsApproval?: boolean
  /** The request is a dry run (the model asked for the call's preview; the tool is shown as a read). */
  dryRun?: boolean
  /** Argument path (dots for nesting) → test. Every listed test must pass. */
  args?: Record<string, ArgMatcher>
  /** Agent name pattern(s): who is acting. */
  agent?: OneOrMany<string>
  /** The environment the policy runs in (config `environment`). */
  environment?: OneOrMany<string>
}

export interface Rule {
  id: string
  verdict: 'allow' | 'ask' | 'deny'
  /** Higher first; at equal priority deny beats ask beats allow, then the order in the file. */
  priority: number
  match: Match
  reason?: string
  /** For ask: who may approve (overrides the top-level `approvers`). */
  approvers?: string[]
  /** For allow: limits the call must keep (a constrained allow); checked strictly at load (see constraints.ts). */
  constraints?: { maxAmount?: number; pathPrefix?: string; timeLimitMs?: number }
}

export interface Config {
  rules: Rule[]
  default: 'allow' | 'ask' | 'deny'
  approvers: string[]
  environment?: string
}

const sideEffect = Schema.union(['none', 'local', 'external'])
const oneOrMany = <T>(s: Schema<T>) => Schema.union([s, Schema.array(s)]) as Schema<any>
// schemastery's inferred types do not model this union well; the runtime check is what matters.
const argMatcher: Schema<ArgMatcher> = Schema.union([
  Schema.string(),
  Schema.number(),
  Schema.boolean(),
  Schema.object({
    // `in` is optional: schemastery would otherwise default an absent array to [] and no value is in [].
    equals: Schema.any(),
    regex: Schema.string(),
    in: Schema.union([Schema.const(undefined as never), Schema.array(Schema.any())]),
    gt: Schema.number(),
    gte: Schema.number(),
    lt: Schema.number(),
    lte: Schema.number(),
    exists: Schema.boolean(),
  }) as Schema<any>,
]) as Schema<any>

export default {
  name: 'policy-rules',
  version: '2.1.0',
  description:
    'Allow / ask / deny by tool, namespace, side effect, arguments, agent and environment, by explicit priority; asks name their approvers and fail closed without one.',
  provides: { policy: '1.2.0' },
  // Each argument test is compiled here, so an unknown operator or a bad operand is a config error
  // (naming its key path) and never a rule that matches everything.
  config: Schema.transform(
    Schema.object({
      rules: Schema.array(
        Schema.object({
          id: Schema.string()
            .pattern(/^[a-z0-9][a-z0-9-]*$/)
            .required()
            .description('Recorded with every decision the rule makes.'),
          verdict: Schema.union(['allow', 'ask', 'deny']).required(),
          priority: Schema.number()
            .default(0)
            .description('Higher is checked first. At equal priority deny beats ask beats allow, then the order in the file.'),
          match: Schema.object({
            tool: oneOrMany(Schema.string()).description('Tool name pattern(s); `*` matches any run of characters.'),
            namespace: oneOrMany(Schema.string()).description('Pattern(s) for the part of the tool name before `__`.'),
            sideEffect: oneOrMany(sideEffect),
            needsApproval: Schema.boolean().description("Match on the tool contract's needsApproval flag."),
            dryRun: Schema.boolean().description(
              "true: the request is a dry run (only the tool's preview runs; the tool is shown as a read, sideEffect none). false: a real call.",
            ),
            args: Schema.dict(argMatcher).description('Argument path → test; all must pass.'),
            agent: oneOrMany(Schema.string()).description('Agent name pattern(s).'),
            environment: oneOrMany(Schema.string()).description('Environment name(s), compared with the config `environment`.'),
          }).default({} as any),
          reason: Schema.string().description('Why, in words a reviewer understands.'),
          approvers: Schema.union([Schema.const(undefined as never), Schema.array(Schema.string())]).description(
            'For ask: who may approve (names given with --by; * for anyone). Overrides the top-level approvers.',
          ),
          // Checked by hand at load (constraints.ts): unknown names and bad values are errors, never dropped.
          constraints: Schema.any().description(
            'For allow: limits the call must keep, given to the tool in io.constraints: maxAmount (a number >= 0), pathPrefix (a folder relative to the workspace root, without ..; held by path segments after symbolic links), timeLimitMs (a positive integer). A tool that does not enforce one is refused (constraint_unenforceable).',
          ),
        }),
      )
        .default([])
        .description('The rules; see priority for the order.'),
      default: Schema.union(['allow', 'ask', 'deny']).default('deny').description('Verdict when no rule matches (deny: fail closed).'),
      approvers: Schema.array(Schema.string())
        .default([])
        .description('Who may approve an ask (names given with --by; * for anyone). With none, an ask is denied: fail closed.'),
      environment: Schema.string().description('The environment rules match on (match.environment). Default: $CORDAGE_ENV.'),
    }),
    (config: any) => {
      checkArgsPatterns(
        (config.rules ?? []).map(
          (rule: Rule, i: number) => [`.rules[${i}].match.args`, rule.match?.args] as [string, ArgsPattern | undefined],
        ),
      )
      checkLists(
        (config.rules ?? []).flatMap((rule: Rule, i: number) => [
          ...['tool', 'namespace', 'sideEffect', 'agent', 'environment'].map(
            (key) => [`.rules[${i}].match.${key}`, (rule.match as Record<string, unknown> | undefined)?.[key]] as [string, unknown],
          ),
          // An empty approvers list is allowed (nobody may approve: the ask is denied); a blank name is not.
          ...(Array.isArray((rule as { approvers?: unknown }).approvers) && (rule as { approvers: unknown[] }).approvers.length
            ? [[`.rules[${i}].approvers`, (rule as { approvers?: unknown }).approvers] as [string, unknown]]
            : []),
        ]),
      )
      if (Array.isArray(config.approvers) && config.approvers.length) checkLists([['.approvers', config.approvers]])
      return config
    },
  ),
} satisfies Manifest
