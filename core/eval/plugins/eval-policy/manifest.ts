import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  mode: 'allow-all' | 'deny-all' | 'malformed'
}

export default {
  name: 'eval-policy',
  version: '1.0.0',
  description:
    'For evaluations only: a policy that answers the same for every action (allow-all, deny-all), or answers something that is not a decision (malformed).',
  provides: { policy: '1.1.0' },
  config: Schema.object({
    mode: Schema.union(['allow-all', 'deny-all', 'malformed'])
      .required()
      .description(
        'allow-all: every action runs, none asks for approval (policy ablated); deny-all: every action is denied; malformed: a verdict the contract does not know.',
      ),
  }),
} satisfies Manifest
