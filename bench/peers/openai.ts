/**
 * The OpenAI Agents SDK for JS under the same workload, through its public API: an `Agent` with a
 * `tool()` (or, with `tools` above 1, that one among others the model never calls,
 * bench/many-tools.ts), run by a `Runner`, with a custom `Model` (the SDK's own interface for plugging in a model)
 * that returns scripted responses and never touches the network.
 *
 * Tracing is off three ways — the env flag the SDK reads, the global provider switch, and the Runner
 * option — so no span is built and no exporter is ever asked to send anything.
 */
import { z } from 'zod'
import {
  Agent,
  Runner,
  Usage,
  setTracingDisabled,
  tool,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents'
import { fillers } from '../many-tools.ts'
import type { Subject } from '../measure.ts'

process.env.OPENAI_AGENTS_DISABLE_TRACING = '1'
setTracingDisabled(true)

/** Calls the no-op tool until call `steps`, then answers. Counts its own calls: reset before each run. */
class ScriptModel implements Model {
  steps = 1
  calls = 0

  async getResponse(_request: ModelRequest): Promise<ModelResponse> {
    const call = ++this.calls
    const output: ModelResponse['output'] =
      call < this.steps
        ? [{ type: 'function_call', callId: `call_${call}`, name: 'noop', arguments: '{}', status: 'completed' }]
        : [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }]
    return { usage: new Usage(), output }
  }

  // biome-ignore lint/correctness/useYield: the interface wants a generator; the bench never streams
  async *getStreamedResponse(_request: ModelRequest): AsyncIterable<StreamEvent> {
    throw new Error('the bench runs the SDK non-streamed')
  }
}

export function openaiSubject(tools = 1): Subject {
  const model = new ScriptModel()
  const noop = tool({
    name: 'noop',
    description: 'does nothing',
    parameters: z.object({}),
    execute: async () => 'ok',
  })
  const others = fillers(tools).map((filler) =>
    tool({
      name: filler.name,
      description: filler.description,
      parameters: z.object({ query: z.string(), limit: z.number() }),
      execute: async () => {
        throw new Error(filler.refusal)
      },
    }),
  )
  const agent = new Agent({ name: 'bench', instructions: 'bench', model, tools: [noop, ...others] })
  const runner = new Runner({ tracingDisabled: true })
  return {
    name: 'OpenAI Agents SDK',
    async run(steps) {
      model.steps = steps
      model.calls = 0
      const result = await runner.run(agent, 'task', { maxTurns: steps + 1 })
      const outputs = result.newItems.filter((item) => item.type === 'tool_call_output_item').length
      if (result.finalOutput !== 'done' || model.calls !== steps || outputs !== steps - 1) {
        throw new Error(`openai: ${model.calls} model calls, ${outputs} tool outputs, final ${JSON.stringify(result.finalOutput)}`)
      }
    },
  }
}
