import { z } from 'zod'
import { defineTool, definePlugin, type ArgSchema, type Tool } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { fillerCandidates, type FillerSpec } from './vocabulary.ts'

export { fillerCandidates, Combinations, type FillerSpec } from './vocabulary.ts'

/**
 * The argument schema of a distractor, and its JSON schema, made once per shape and kind of record
 * (90 of them) rather than per tool: converting a zod schema takes about a millisecond, which is
 * seconds for 2000 tools.
 */
const schemas = new Map<string, { input: ArgSchema<unknown>; json: Record<string, unknown> }>()

function schemaOf(spec: FillerSpec): { input: ArgSchema<unknown>; inputSchema: Record<string, unknown> } {
  const id = `${spec.shape}:${spec.kind}`
  let made = schemas.get(id)
  if (!made) {
    const zod = input(spec)
    made = { input: zod, json: zod.toJSONSchema() as Record<string, unknown> }
    schemas.set(id, made)
  }
  // A copy per tool: defineTool edits the JSON schema it is given.
  return { input: made.input, inputSchema: structuredClone(made.json) }
}

function input(spec: FillerSpec) {
  if (spec.shape === 'id') return z.object({ id: z.string().min(1).describe(`The ${spec.kind} id`) }).strict()
  if (spec.shape === 'range')
    return z
      .object({
        from: z.string().min(1).describe('First day, YYYY-MM-DD'),
        to: z.string().min(1).optional().describe('Last day, YYYY-MM-DD (default: today)'),
      })
      .strict()
  return z
    .object({
      query: z.string().min(1).describe(`Words to look for among the ${spec.plural}`),
      limit: z.number().int().min(1).max(50).optional().describe('At most this many results (default 10)'),
    })
    .strict()
}

/** A distractor: read-only, safe to repeat, and it finds nothing, so it never helps a run along. */
export function fillerTool(spec: FillerSpec): Tool {
  return defineTool({
    name: spec.name,
    description: spec.description,
    ...schemaOf(spec),
    sideEffect: 'none',
    idempotent: true,
    timeoutMs: 5000,
    run: () => ({ output: { results: [], note: `no ${spec.plural} match` } }),
  })
}

export default definePlugin<Config>(manifest, (ctx, config) => {
  let registered = 0
  // A name another plugin of the agent already registered is passed over for the next one, so the
  // agent's own tools stay as they are and `count` distractors are still added.
  for (const spec of fillerCandidates(config.seed)) {
    if (registered === config.count) break
    if (ctx.tools.get(spec.name)) continue
    ctx.tools.register(fillerTool(spec))
    registered++
  }
})
