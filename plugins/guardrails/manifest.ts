import { Schema } from 'cordis'
import { safeRegex, type GuardStage, type Manifest } from 'cordage'

export type GuardAction = 'block' | 'redact'

export interface DetectorOptions {
  /** Off when false (an object given for a detector switches it on unless it says `enabled: false`). */
  enabled: boolean
  /** The stages it checks. */
  stages: GuardStage[]
  /** What a hit does at `tool_output` and `answer`. At `tool_input` every hit blocks: arguments are never changed. */
  action: GuardAction
  /** What a match becomes when redacted. Default `[redacted:<kind>]`. */
  replacement?: string
}

/** `true` switches a detector on with its defaults, `false` off; an object sets its options. */
export type DetectorSetting = boolean | DetectorOptions

export interface Pattern {
  name: string
  /** A regular expression in RE2 syntax: no lookaround, no backreferences (see {@link patternProblem}). */
  pattern: string
  /** Regular expression flags besides `g` (always on): `i`, `m`, `s`, `u`. */
  flags?: string
  stages: GuardStage[]
  action: GuardAction
  replacement?: string
}

export interface Exemption {
  /** Tool name pattern(s); `*` matches any run of characters. */
  tool: string | string[]
  /** Detector or pattern names it exempts from; `*` for all. */
  detectors: string[]
  /** The tool stages it applies to. */
  stages: GuardStage[]
}

export interface Config {
  detectors: {
    secrets: DetectorSetting
    card: DetectorSetting
    email: DetectorSetting
    phone: DetectorSetting
    iban: DetectorSetting
  }
  patterns: Pattern[]
  exempt: Exemption[]
}

const Stages = ['tool_input', 'tool_output', 'answer'] as const
const stage = Schema.union([...Stages])
const action = Schema.union(['block', 'redact'])
const AllStages: GuardStage[] = [...Stages]
const TextStages: GuardStage[] = ['tool_output', 'answer']

/** The defaults of one detector, and the setting it has when the config does not name it. */
export const DetectorDefaults: Record<keyof Config['detectors'], { on: boolean; stages: GuardStage[]; action: GuardAction; what: string }> =
  {
    secrets: {
      on: true,
      stages: AllStages,
      action: 'redact',
      what: 'API keys (sk-…, Stripe), AWS access key ids, GitHub, Slack and Google tokens, JWTs, bearer tokens, private key blocks',
    },
    card: { on: true, stages: TextStages, action: 'redact', what: 'card numbers of the major brands that pass the Luhn check' },
    email: { on: false, stages: TextStages, action: 'redact', what: 'email addresses' },
    phone: { on: false, stages: TextStages, action: 'redact', what: 'phone numbers in international (+…) or North American form' },
    iban: { on: false, stages: TextStages, action: 'redact', what: 'IBANs that pass the mod-97 check' },
  }

/**
 * What is wrong with a custom pattern, or undefined. Patterns run on every tool result and answer, text
 * the model and the tools control, so they are compiled for the linear-time engine (safeRegex): a
 * pattern that needs backtracking (lookaround, backreferences) is refused rather than left to stall the
 * process on a crafted input. A pattern that matches the empty string would match everywhere.
 */
export function patternProblem(p: Pick<Pattern, 'pattern' | 'flags'>): string | undefined {
  let regex
  try {
    regex = safeRegex(p.pattern, p.flags ?? '')
  } catch (error) {
    return (error as Error).message
  }
  return regex.test('') ? `/${p.pattern}/ matches the empty string, so it would match everywhere` : undefined
}

const detector = (name: keyof Config['detectors']) => {
  const d = DetectorDefaults[name]
  return Schema.union([
    Schema.boolean(),
    Schema.object({
      enabled: Schema.boolean().default(true).description('Off when false.'),
      stages: Schema.array(stage).default(d.stages).description('The stages it checks.'),
      action: action.default(d.action).description('block or redact, at tool_output and answer; at tool_input a hit always blocks.'),
      replacement: Schema.string().description('What a match becomes. Default [redacted:<kind>].'),
    }),
  ])
    .default(d.on)
    .description(`${d.what}. Default: ${d.on ? 'on' : 'off'}, ${d.action} at ${d.stages.join(', ')}.`)
}

export default {
  name: 'guardrails',
  version: '1.0.0',
  description:
    'Content guardrails: finds secrets, card numbers and other personal data in tool arguments, tool results and final answers, and blocks or redacts them.',
  provides: { guardrail: '1.0.0' },
  config: Schema.object({
    detectors: Schema.object({
      secrets: detector('secrets'),
      card: detector('card'),
      email: detector('email'),
      phone: detector('phone'),
      iban: detector('iban'),
    })
      .default({} as never)
      .description('The built-in detectors, by name: true, false, or { enabled, stages, action, replacement }.'),
    patterns: Schema.transform(
      Schema.array(
        Schema.object({
          name: Schema.string()
            .pattern(/^[a-z0-9][a-z0-9-]*$/)
            .required()
            .description('Names the guard in guard/tripped and the default replacement.'),
          pattern: Schema.string().required().description('A regular expression in RE2 syntax (no lookaround, no backreferences).'),
          flags: Schema.string()
            .pattern(/^[imsu]*$/)
            .description('Flags besides g (always on): i, m, s, u.'),
          stages: Schema.array(stage).default(AllStages).description('The stages it checks.'),
          action: action.default('redact').description('block or redact, at tool_output and answer; at tool_input a hit always blocks.'),
          replacement: Schema.string().description('What a match becomes. Default [redacted:<name>].'),
        }),
      ),
      (patterns) => {
        // Here, so that cordage check names the pattern's line; the plugin checks again when it starts.
        patterns.forEach((p, i) => {
          const problem = patternProblem(p as Pattern)
          if (problem) throw new TypeError(`$.patterns[${i}].pattern pattern "${p.name}": ${problem}`)
        })
        return patterns
      },
    )
      .default([])
      .description('Custom patterns, checked after the built-in detectors.'),
    exempt: Schema.array(
      Schema.object({
        tool: Schema.union([Schema.string(), Schema.array(Schema.string())])
          .required()
          .description('Tool name pattern(s); * matches any run of characters.'),
        detectors: Schema.array(Schema.string()).default(['*']).description('Detector or pattern names it exempts from; * for all.'),
        stages: Schema.array(Schema.union(['tool_input', 'tool_output']))
          .default(['tool_input', 'tool_output'])
          .description('The tool stages it covers.'),
      }),
    )
      .default([])
      .description('Tools that may see (tool_input) or return (tool_output) what a detector finds, such as a vault tool and secrets.'),
  }),
} satisfies Manifest
