/**
 * Pi's agent core under the same workload, through its public API: an `Agent` with one `AgentTool`
 * (or, with `tools` above 1, that one among others the model never calls, bench/many-tools.ts), whose
 * `streamFn` (the documented hook for a custom or proxied model) answers from a script. The stream
 * carries only the final `done` event, the least a stream function may send.
 */
import { Agent, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core'
import { createAssistantMessageEventStream, type AssistantMessage } from '@mariozechner/pi-ai'
import { Type } from 'typebox'
import { fillers } from '../many-tools.ts'
import type { Subject } from '../measure.ts'

const usage = () => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
})

export function piSubject(tools = 1): Subject {
  const script = { steps: 1, calls: 0 }

  /** Calls the no-op tool until call `steps`, then answers. Counts its own calls: reset before each run. */
  const streamFn: StreamFn = (model) => {
    const call = ++script.calls
    const toolUse = call < script.steps
    const message: AssistantMessage = {
      role: 'assistant',
      content: toolUse ? [{ type: 'toolCall', id: `call_${call}`, name: 'noop', arguments: {} }] : [{ type: 'text', text: 'done' }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: usage(),
      stopReason: toolUse ? 'toolUse' : 'stop',
      timestamp: Date.now(),
    }
    const stream = createAssistantMessageEventStream()
    stream.push({ type: 'done', reason: toolUse ? 'toolUse' : 'stop', message })
    stream.end()
    return stream
  }

  const noop: AgentTool = {
    name: 'noop',
    label: 'noop',
    description: 'does nothing',
    parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: null }),
  }
  const others = fillers(tools).map(
    (filler): AgentTool => ({
      name: filler.name,
      label: filler.name,
      description: filler.description,
      parameters: Type.Object({ query: Type.String(), limit: Type.Number() }),
      execute: async () => {
        throw new Error(filler.refusal)
      },
    }),
  )
  const agent = new Agent({ initialState: { systemPrompt: 'bench', tools: [noop, ...others] }, streamFn })

  return {
    name: 'Pi agent core',
    async run(steps) {
      script.steps = steps
      script.calls = 0
      // One agent for every run, as Cordage keeps one runtime: reset empties the transcript.
      agent.reset()
      await agent.prompt('task')
      const messages = agent.state.messages
      const results = messages.filter((m) => m.role === 'toolResult' && !m.isError).length
      const last = messages[messages.length - 1]
      const text = last?.role === 'assistant' && last.content[0]?.type === 'text' ? last.content[0].text : undefined
      if (script.calls !== steps || results !== steps - 1 || text !== 'done' || agent.state.errorMessage) {
        throw new Error(
          `pi: ${script.calls} model calls, ${results} tool results, final ${JSON.stringify(text)} ${agent.state.errorMessage ?? ''}`,
        )
      }
    },
  }
}
