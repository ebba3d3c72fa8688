import { Schema } from 'cordis'
import { regexPattern, type Manifest } from 'cordage'

export interface Config {
  windowTokens: number
  reserveTokens: number
  keepRecentShare: number
  summaryShare: number
  summaryMaxTokens: number
  useModel: boolean
  citationPattern: string
  commitmentPattern: string
  recall: boolean
  recallMaxChars: number
  cachedRuns: number
}

export default {
  name: 'compaction-summary',
  version: '1.1.0',
  description:
    'Compacts under token pressure: keeps the recent part verbatim, summarises the rest through the model (extractive fallback), checks what must survive, and offers a recall tool.',
  provides: { compactor: '1.1.0' },
  requires: { model: '^1.1.0', tools: '^1.0.0' },
  optional: { store: '^2.0.0' },
  config: Schema.object({
    windowTokens: Schema.natural().min(1).default(128_000).description("The model's context window, in tokens."),
    reserveTokens: Schema.natural()
      .default(16_000)
      .description('Tokens kept free for the tool schemas and the answer; compaction starts above windowTokens - reserveTokens.'),
    keepRecentShare: Schema.number().min(0).max(1).default(0.4).description('Fraction of the limit for the recent part kept verbatim.'),
    summaryShare: Schema.number().min(0).max(1).default(0.25).description('Fraction of the limit the summary may take.'),
    summaryMaxTokens: Schema.natural().min(1).default(2000).description('The summary is never longer than this.'),
    useModel: Schema.boolean().default(true).description('Ask the model for the summary; false uses the extractive summary only.'),
    citationPattern: regexPattern('citationPattern', '\\[source: ([^\\]]+)\\]').description(
      'A citation in a tool result (regular expression in RE2 syntax; group 1 is the reference): a fact with a source.',
    ),
    commitmentPattern: regexPattern(
      'commitmentPattern',
      "\\b(I will|I'll|I am going to|I still need to|next,? I|then I|TODO)\\b",
      'i',
    ).description('Model text that states an open commitment (regular expression in RE2 syntax, case-insensitive).'),
    recall: Schema.boolean().default(true).description("Register the recall tool, which reads events of the caller's run by seq."),
    recallMaxChars: Schema.natural().min(100).default(4000).description('Most characters recall returns per event.'),
    cachedRuns: Schema.natural()
      .min(1)
      .default(256)
      .description('Runs whose last summary and split projection are kept, so a step reads only what is new.'),
  }),
} satisfies Manifest
