import { Schema } from 'cordis'
import { MaxHistoryBytes, type Manifest } from 'cordage'

export interface Config {
  /** Most bytes of JSON the entries of a turn's thread/history take; the oldest turns are shortened, then dropped, to fit. */
  historyBytes: number
  /** Longest text an entry of the history keeps once shortening whole turns was not enough. */
  clipChars: number
}

export default {
  name: 'threads',
  version: '1.0.0',
  description:
    'Threads: a run started with a thread (--thread, StartOptions.thread) becomes its next turn, sees the turns before it, and counts what they spent against the thread budgets.',
  requires: { store: '^2.3.0' },
  optional: { agents: '^1.3.0' },
  config: Schema.object({
    historyBytes: Schema.natural()
      .min(1024)
      .max(MaxHistoryBytes)
      .default(MaxHistoryBytes)
      .description(
        `Bytes of JSON (UTF-8) the earlier turns a turn sees may take in its thread/history, at most ${MaxHistoryBytes}; beyond it the oldest turns keep only their message and answer, then long texts are clipped, then the oldest turns are left out.`,
      ),
    clipChars: Schema.natural()
      .min(100)
      .default(4000)
      .description('Characters a text of the history keeps when shortening whole turns was not enough to fit historyBytes.'),
  }),
} satisfies Manifest
