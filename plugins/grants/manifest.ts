import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export default {
  name: 'grants',
  version: '1.0.0',
  description:
    'Approvals beyond one call: an ask that a run-wide approval (approve --scope run) or a standing grant (--scope grant) covers is answered with that grant, which the kernel checks before it approves the call on record.',
  // Standing grants come from the store (contract 2.1.0 and later); with none, only grants for the run are used.
  optional: { store: '^2.0.0' },
  config: Schema.object({}),
} satisfies Manifest
