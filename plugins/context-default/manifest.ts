import { Schema } from 'cordis'
import { regexPattern, type Manifest } from 'cordage'

/** One source: a file (relative to the preset folder) split into paragraphs, or an inline note. */
export interface SourceConfig {
  file?: string
  note?: string
  /** Name of a note in its provenance (`note:<name>`); notes are numbered otherwise. */
  name?: string
}

/** Item classes of the sources and transcript sections; each has a priority and an optional budget share. */
export const ItemClasses = ['sources', 'inputs', 'feedback', 'failures', 'exchanges', 'answers'] as const
export type ItemClass = (typeof ItemClasses)[number]

export interface ClassConfig {
  /** Higher is kept longer when the projection is over its budget. */
  priority: number
  /** At most this fraction of `maxTokens` for the class (only applies with a budget). */
  share?: number
}

export interface Config {
  system: string
  sources: SourceConfig[]
  maxTokens: number
  recent: number
  classes: Record<ItemClass, ClassConfig>
  observationTokens: number
  clippedTokens: number
  citationPattern: string
  cachedRuns: number
}

const itemClass = (priority: number, description: string, share?: number) =>
  Schema.object({
    priority: Schema.natural().default(priority).description('Higher is kept longer.'),
    share:
      share === undefined
        ? Schema.number().min(0).max(1).description('At most this fraction of maxTokens.')
        : Schema.number().min(0).max(1).default(share).description('At most this fraction of maxTokens.'),
  }).description(description)

export default {
  name: 'context-default',
  version: '1.2.0',
  description:
    'Assembles the projection in ordered sections (system, sources, goal, transcript) with priorities, a token budget and provenance on every item.',
  provides: { context: '1.3.0' },
  config: Schema.object({
    system: Schema.string()
      .default('You are a careful assistant. Use the tools to find facts, and cite the source of each fact you state.')
      .description('The system prompt.'),
    sources: Schema.array(
      Schema.object({
        file: Schema.string().description('A text file, relative to the preset folder; each paragraph is one item (file:<path>#<n>).'),
        note: Schema.string().description('Inline text; one item (note:<name>).'),
        name: Schema.string().description('Name of the note in its provenance.'),
      }),
    )
      .default([])
      .description('Reference material shown after the system prompt.'),
    maxTokens: Schema.natural().default(0).description('Token budget of the projection; 0 for none.'),
    recent: Schema.natural()
      .default(4)
      .description('Most recent transcript items (a call with its results is one item) that are never dropped or clipped.'),
    classes: Schema.object({
      sources: itemClass(30, 'Paragraphs of files and notes.', 0.3),
      inputs: itemClass(90, 'User messages after the goal (revisions, answers to questions).'),
      feedback: itemClass(80, "Harness feedback (the verifier's reasons)."),
      failures: itemClass(60, 'Tool calls with a failed, denied or rejected result.'),
      exchanges: itemClass(50, 'Tool calls with their results.'),
      answers: itemClass(40, 'Model turns without calls (answers, questions).'),
    }).description('Priority and budget share of each item class.'),
    observationTokens: Schema.natural()
      .min(16)
      .default(2000)
      .description('A tool result longer than this is clipped, with a note giving its seq.'),
    clippedTokens: Schema.natural()
      .min(16)
      .default(120)
      .description('Under budget pressure, older tool results are clipped to this before anything is dropped.'),
    citationPattern: regexPattern('citationPattern', '\\[source: [^\\]]+\\]').description(
      'Citations that a clipped result keeps in its note (regular expression, RE2 syntax: no lookaround, no backreferences).',
    ),
    cachedRuns: Schema.natural().min(1).default(256).description('Runs whose rendered transcript is kept for incremental assembly.'),
  }),
} satisfies Manifest
