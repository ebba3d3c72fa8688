import { definePlugin, type PolicyDecision, type PolicyService } from 'cordage'
import manifest, { type Config } from './manifest.ts'

/** What each mode answers, for every action. */
const Answers = {
  'allow-all': { verdict: 'allow', ruleId: 'eval-allow-all', reason: 'evaluation without policy: every action is allowed' },
  'deny-all': { verdict: 'deny', ruleId: 'eval-deny-all', reason: 'evaluation: every action is denied' },
  // `permit` is no verdict of the policy contract: the kernel must deny (fail closed), never run the call.
  malformed: { verdict: 'permit', ruleId: 'eval-malformed', reason: 'evaluation: a verdict the policy contract does not know' },
} as const

export class FixedPolicy implements PolicyService {
  /** Tickets and approvals are bound to the version: each mode is its own policy. */
  readonly version: string

  constructor(private mode: Config['mode']) {
    this.version = `eval-policy@${manifest.version}:${mode}`
  }

  decide(): PolicyDecision {
    // A fresh object each time, so nothing the kernel does to one decision reaches the next.
    return { ...Answers[this.mode] } as unknown as PolicyDecision
  }
}

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('policy', new FixedPolicy(config.mode))
})
