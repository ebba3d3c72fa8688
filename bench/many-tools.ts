/**
 * The tools besides the no-op one in the bench's many-tools variant, the same for every system: each
 * system registers them its own way (a `defineTool` with a zod schema for Cordage, an `AgentTool` with
 * a TypeBox schema for Pi, a `tool()` with a zod schema for the OpenAI SDK). The model never calls
 * them; they are there to be listed, shown and carried along at every step. Each has a name, a
 * description and two required arguments, like a small real tool.
 */

/** The tool counts the bench measures: the no-op tool alone, and the no-op tool among 199 others. */
export const TOOL_COUNTS = [1, 200] as const

export interface Filler {
  name: string
  description: string
  /** Why a filler cannot run: the model is scripted never to call one. */
  refusal: string
}

/** The `count - 1` tools that go with the no-op tool so that a system has `count` in all. */
export function fillers(count: number): Filler[] {
  return Array.from({ length: Math.max(0, count - 1) }, (_, i) => {
    const n = String(i + 1).padStart(3, '0')
    return {
      name: `lookup_${n}`,
      description: `Looks up records of kind ${n} matching a query; returns at most limit of them`,
      refusal: `lookup_${n} is never called by the bench`,
    }
  })
}
