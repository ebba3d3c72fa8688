/**
 * What the adapters' own tests send: a support exchange in which the model called one tool twice, the
 * second time with arguments cut off mid-JSON, and both results came back; and the request that
 * carries it, as the kernel would make it for step 2 of run r1.
 */
import type { ContextMessage, ModelRequest, ToolView } from 'cordage'

export const lookupTool: ToolView = {
  name: 'lookup_policy',
  description: 'Find the policy',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
}

/** @param assistantText what the model said beside its calls */
export function supportHistory(assistantText = ''): ContextMessage[] {
  return [
    { role: 'system', text: 'You answer support questions.', source: 0 },
    { role: 'user', text: 'Refund window?', source: 2 },
    {
      role: 'assistant',
      text: assistantText,
      calls: [
        { actionId: 's1.a1', name: 'lookup_policy', args: { topic: 'refunds' } },
        { actionId: 's1.a2', name: 'lookup_policy', args: '{"topic": "ret' },
      ],
      source: 5,
    },
    { role: 'tool', actionId: 's1.a1', text: '30 days', source: 9 },
    { role: 'tool', actionId: 's1.a2', text: 'Error: not valid JSON', source: 10, isError: true },
  ]
}

/** A request for `messages` offering lookupTool, with a signal nobody aborts; `over` replaces any part. */
export function modelRequest(messages: ContextMessage[], over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    runId: 'r1',
    stepId: 's2',
    stepIndex: 2,
    messages,
    tools: [lookupTool],
    signal: new AbortController().signal,
    ...over,
  }
}
