import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  verdict: 'pass' | 'fail'
}

export default {
  name: 'eval-verifier',
  version: '1.0.0',
  description: 'For evaluations only: a verifier that answers the same whatever the answer (pass: accepts any, fail: rejects any).',
  provides: { verifier: '1.1.0' },
  config: Schema.object({
    verdict: Schema.union(['pass', 'fail'])
      .required()
      .description('pass: every final answer is accepted (verification ablated); fail: every final answer is rejected.'),
  }),
} satisfies Manifest
