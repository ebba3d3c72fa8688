import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  batchSize: number
  maxChars: number
  cacheSize: number
}

export default {
  name: 'embeddings-local',
  version: '1.0.0',
  description:
    'The embeddings service from a model that ships inside a package: Universal Sentence Encoder lite (512 dimensions), run in this process on the CPU, offline.',
  provides: { embeddings: '1.0.0' },
  config: Schema.object({
    batchSize: Schema.natural()
      .min(1)
      .max(256)
      .default(32)
      .description('Texts embedded in one pass of the model; the event loop is free between passes.'),
    maxChars: Schema.natural()
      .min(16)
      .max(20_000)
      .default(1000)
      .description('Texts are cut to this many characters first: the model reads sentences, and the time it takes grows with the length.'),
    cacheSize: Schema.natural()
      .max(1_000_000)
      .default(50_000)
      .description('Vectors kept per text, so a tool registered again (after a reload) or a repeated query costs nothing (0: no cache).'),
  }),
} satisfies Manifest
