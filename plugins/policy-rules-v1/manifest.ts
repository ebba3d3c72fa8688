import { Schema } from 'cordis'
import { checkArgsPatterns, checkLists, type ArgMatcher, type ArgsPattern, type Manifest } from 'cordage'

export interface Match {
  tool?: string | string[]
  sideEffect?: ('none' | 'local' | 'external') | ('none' | 'local' | 'external')[]
  needsApproval?: boolean
  /** Argument path (dots for nesting) → test. Every listed test must pass. */
  args?: Record<string, ArgMatcher>
}

export interface Rule {
  id: string
  verdict: 'allow' | 'ask' | 'deny'
  match: Match
  reason?: string
}

export interface Config {
  rules: Rule[]
  default: 'allow' | 'ask' | 'deny'
}

const sideEffect = Schema.union(['none', 'local', 'external'])
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
  version: '1.0.0',
  description: 'Allow / ask / deny by tool name, side-effect class and argument patterns; first matching rule wins.',
  provides: { policy: '1.0.0' },
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
          match: Schema.object({
            tool: Schema.union([Schema.string(), Schema.array(Schema.string())]).description(
              'Tool name pattern(s); `*` matches any run of characters.',
            ),
            sideEffect: Schema.union([sideEffect, Schema.array(sideEffect)]),
            needsApproval: Schema.boolean().description("Match on the tool contract's needsApproval flag."),
            args: Schema.dict(argMatcher).description('Argument path → test; all must pass.'),
          }).default({} as any),
          reason: Schema.string().description('Why, in words a reviewer understands.'),
        }),
      )
        .default([])
        .description('Checked in order; the first match decides.'),
      default: Schema.union(['allow', 'ask', 'deny']).default('deny').description('Verdict when no rule matches (deny: fail closed).'),
    }),
    (config: any) => {
      checkArgsPatterns(
        (config.rules ?? []).map(
          (rule: Rule, i: number) => [`.rules[${i}].match.args`, rule.match?.args] as [string, ArgsPattern | undefined],
        ),
      )
      checkLists(
        (config.rules ?? []).flatMap((rule: Rule, i: number) => [
          ...['tool', 'sideEffect'].map(
            (key) => [`.rules[${i}].match.${key}`, (rule.match as Record<string, unknown> | undefined)?.[key]] as [string, unknown],
          ),
        ]),
      )
      return config
    },
  ),
} satisfies Manifest
