/**
 * @module playground/step-context
 * What the model saw at a step, rebuilt. The log records a summary of each step's projection
 * (`step/context`: message count, estimated tokens, tool names), not the messages: the projection is
 * rebuilt from state, each message naming the seq it came from (invariant 5, docs/reference/events.md).
 * So this does what the kernel did: fold the run's events up to the point where the step assembled its
 * context, and ask the agent's context service for the projection of that state, with the views of the
 * tools the step showed. The context contract says the same state gives the same projection.
 *
 * What this cannot promise, and says in `caveats`: the context plugin serving now may not be the one
 * the step ran (another version, or other content at one version); text that does not come from the
 * log (a system prompt, a file) is as the plugin makes it now; a compaction that was used replaced
 * messages with a summary the log does not keep; the log is stored scrubbed of the agent's secrets.
 * `matches` compares the rebuilt projection's counts with the recorded ones.
 */
import { readService, replay, type AgentRuntime, type ContextService, type RunEvent, type ToolsService, type ToolView } from 'cordage'

export interface RebuiltMessage {
  role: string
  text: string
  calls?: { actionId: string; name: string; args: unknown }[]
  actionId?: string
  isError?: boolean
  /** The seq the message came from (0: not from the log), the type of that event, and `ref` for text from elsewhere. */
  source: number
  sourceType?: string
  ref?: string
  /** The message carries provider reasoning blocks (opaque, passed back to the provider unchanged). */
  reasoning?: boolean
  /** A compaction used at this step summarised this message's seq: the model saw a summary instead. */
  summarised?: boolean
}

export interface RebuiltContext {
  stepId: string
  /** The step/context event the projection stands for. */
  seq: number
  /** The context plugin that recorded it, and the one that rebuilt it now. */
  recordedBy: string
  rebuiltBy: string
  /** State folded through this seq (the events before the step assembled its context). */
  stateThrough: number
  messages: RebuiltMessage[]
  tokens: number
  tools: ToolView[]
  /** Tools the step showed that no plugin registers now. */
  missingTools: string[]
  recorded: { messages: number; tokens: number }
  /** Whether the rebuilt projection has the recorded message count and token estimate (before compaction, when one was used). */
  matches: boolean
  caveats: string[]
}

/** Bounds the context plugin's time: the contract asks for a fast pure function, a request must not hang on a bug. */
const AssembleTimeoutMs = 5_000

/**
 * Rebuild the projection step `stepId` sent to the model.
 * @returns undefined when the step has not assembled its context yet
 * @throws Error when the agent has no context service now, or it throws or hangs
 */
export async function rebuildContext(
  agent: AgentRuntime,
  events: readonly RunEvent[],
  stepId: string,
): Promise<RebuiltContext | undefined> {
  const recorded = events.filter((e): e is RunEvent<'step/context'> => e.type === 'step/context' && e.stepId === stepId).at(-1)
  if (!recorded) return undefined
  const caveats: string[] = []
  const all = events.filter((e) => e.type === 'step/context' && e.stepId === stepId)
  if (all.length > 1)
    caveats.push(`the step assembled its context ${all.length} times (it was driven again); this is the last, seq ${recorded.seq}`)
  // The projection was assembled from the state before this step's compaction (which is recorded after it).
  const start = events.findLast((e) => e.type === 'step/start' && e.stepId === stepId && e.seq < recorded.seq)
  const compactionStart = events.find(
    (e) => e.type === 'compaction/start' && e.stepId === stepId && e.seq > (start?.seq ?? 0) && e.seq < recorded.seq,
  )
  const cut = compactionStart?.seq ?? recorded.seq
  const state = replay(
    events[0]?.runId ?? '',
    events.filter((e) => e.seq < cut),
  )

  const context = readService<ContextService>(agent.ctx, 'context')
  if (!context) throw new Error(`agent "${agent.name}" has no context service now, so what the model saw cannot be rebuilt`)
  if (context.provider !== recorded.producer)
    caveats.push(`rebuilt by ${context.provider}, but the step was assembled by ${recorded.producer}: the projection may differ`)
  else {
    const name = context.provider.slice(0, context.provider.lastIndexOf('@'))
    const then = state.hashes?.[name]
    const now = agent.hashes[name]
    if (then && now && then !== now)
      caveats.push(`${context.provider} has other content now than when the step ran (content hash ${short(then)} then, ${short(now)} now)`)
  }

  const tools = readService<ToolsService>(agent.ctx, 'tools')?.value
  const views: ToolView[] = []
  const missingTools: string[] = []
  for (const name of recorded.data.tools) {
    const tool = tools?.get(name)
    if (tool) views.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })
    else missingTools.push(name)
  }
  if (missingTools.length) caveats.push(`no plugin registers ${missingTools.join(', ')} now: the rebuilt projection had no view of them`)

  const projection = await withTimeout(
    Promise.resolve(context.value.assemble({ state, tools: views })),
    `${context.provider} did not assemble the context within ${AssembleTimeoutMs}ms`,
  )

  // The compaction used at this step (not rejected), and every seq it stands for, following `extends`.
  const compactions = events.filter((e): e is RunEvent<'compaction/end'> => e.type === 'compaction/end')
  const used = compactions.find((e) => e.stepId === stepId && e.seq < recorded.seq && e.seq > cut && !e.data.rejected)
  const summarised = new Set<number>()
  for (let at: RunEvent<'compaction/end'> | undefined = used; at; ) {
    for (const seq of at.data.summarised) summarised.add(seq)
    const next: number | undefined = at.data.extends
    at = next === undefined ? undefined : compactions.find((e) => e.seq === next)
  }
  if (used)
    caveats.push(
      `a compaction (${used.data.strategy}, seq ${used.seq}) was used at this step: the model saw ${used.data.kept} messages (~${used.data.after} tokens), with a summary in place of the ${summarised.size} marked seq(s); the summary's text is not in the log`,
    )
  caveats.push(
    "the log is stored scrubbed of the agent's secrets, so the rebuilt text shows them scrubbed; text not from the log (source 0) is as the plugin makes it now",
  )

  const typeOf = new Map(events.map((e) => [e.seq, e.type]))
  const messages: RebuiltMessage[] = projection.messages.map((m) => ({
    role: m.role,
    text: m.text,
    calls: m.calls,
    actionId: m.actionId,
    isError: (m as { isError?: boolean }).isError,
    source: m.source,
    sourceType: m.source ? typeOf.get(m.source) : undefined,
    ref: m.ref,
    reasoning: m.reasoning ? true : undefined,
    summarised: summarised.has(m.source) ? true : undefined,
  }))
  const expected = used ? { messages: messages.length, tokens: used.data.before } : recorded.data
  const matches = messages.length === expected.messages && projection.tokens === expected.tokens
  return {
    stepId,
    seq: recorded.seq,
    recordedBy: recorded.producer,
    rebuiltBy: context.provider,
    stateThrough: cut - 1,
    messages,
    tokens: projection.tokens,
    tools: views,
    missingTools,
    recorded: { messages: recorded.data.messages, tokens: recorded.data.tokens },
    matches,
    caveats,
  }
}

const short = (hash: string) => hash.slice(0, 15)

function withTimeout<T>(work: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(message)), AssembleTimeoutMs)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
