/**
 * The `recall` tool: raw events stay in the store after a compaction, and this tool brings back what the
 * model saw of them, by seq, when it needs the details the summary condensed. It reads only the calling
 * run (the kernel's `io.runId`, never an argument), and returns only what the model was shown of each
 * event: a tool result's observation rather than its raw output, a verifier's feedback rather than a
 * sealed reason.
 */
import { z } from 'zod'
import { CordageError, defineTool, type RunEvent, type StoreService, type Tool } from 'cordage'

const Seq = z.number().int().min(1)

export function recallTool(store: () => StoreService | undefined, maxChars: number): Tool {
  return defineTool({
    name: 'recall',
    description:
      'Fetch earlier events of this run by their seq number ("seq 12" in a summary or a clipped result): the full tool result, decision or message.',
    input: z
      .object({
        seq: z.union([Seq, z.array(Seq).min(1).max(20)]).describe('The seq of an event, or a list of them.'),
        run: z.string().optional().describe("Leave out: only this run's events can be recalled."),
      })
      .strict(),
    sideEffect: 'none',
    idempotent: true,
    timeoutMs: 5000,
    async run({ seq, run }, io) {
      if (run !== undefined && run !== io.runId) {
        throw new CordageError('tool_failed', `recall reads only this run's events (${io.runId}), not those of ${run}`)
      }
      const log = store()
      if (!log) throw new CordageError('tool_unavailable', 'recall needs the run store, and this agent has none')
      const seqs = [...new Set(Array.isArray(seq) ? seq : [seq])].sort((a, b) => a - b)
      const found: { seq: number; type: string; text: string }[] = []
      for (const n of seqs) {
        const [event] = await log.read(io.runId, { after: n - 1, limit: 1 })
        if (!event || event.seq !== n) throw new CordageError('tool_failed', `this run has no event seq ${n}`)
        found.push({ seq: n, type: event.type, text: clipTo(describe(event), maxChars) })
      }
      return { output: found, observation: found.map((e) => `seq ${e.seq} (${e.type}): ${e.text}`).join('\n') }
    },
  })
}

/** What the model was shown of an event, in words. */
export function describe(event: RunEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `user: ${event.data.input}`
    case 'run/resumed':
      return event.data.input !== undefined ? `user: ${event.data.input}` : `the run went on (by ${event.data.by})`
    case 'step/model-response': {
      const d = event.data.decision
      if (d.kind === 'final') return `assistant answered: ${d.text}`
      if (d.kind === 'ask_user') return `assistant asked: ${d.question}`
      return `assistant called ${d.calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ')}${d.text ? ` saying: ${d.text}` : ''}`
    }
    case 'tool/proposed':
      return `${event.actionId}: ${event.data.tool}(${JSON.stringify(event.data.args)})`
    case 'tool/decision':
      return `${event.actionId}: policy said ${event.data.verdict} (rule ${event.data.ruleId}): ${event.data.reason}`
    case 'tool/approval-decided':
      return `${event.actionId}: ${event.data.approved ? 'approved' : 'rejected'} by ${event.data.by}${event.data.reason ? `: ${event.data.reason}` : ''}`
    case 'tool/end':
      return `${event.actionId} ${event.data.tool} returned: ${event.data.observation}`
    case 'tool/error':
      // The observation usually says what failed already ("lookup failed (tool_failed): ..."); do not say it twice.
      return `${event.actionId} ${event.data.observation.startsWith(event.data.tool) ? event.data.observation : `${event.data.tool} failed (${event.data.code}): ${event.data.observation}`}`
    case 'tool/reconciled':
      return `${event.actionId} ${event.data.tool} ${event.data.committed ? 'took effect' : 'did not take effect'} (settled by ${event.data.by})`
    case 'verify/end':
      // A sealed check gives feedback and keeps its reason from the model; so does recall.
      return event.data.ok
        ? 'the answer was accepted'
        : `the answer was not accepted (${event.data.code}): ${event.data.feedback ?? event.data.reason ?? ''}`
    case 'thread/history':
      // The turns before this one, as the model was shown them (docs/concepts/threads.md).
      return event.data.entries.map(historyLine).join('\n')
    default:
      return `a ${event.type} event; it holds nothing the model was shown`
  }
}

function historyLine(entry: Extract<RunEvent, { type: 'thread/history' }>['data']['entries'][number]): string {
  const turn = entry.turn ? `${entry.turn} ` : ''
  switch (entry.kind) {
    case 'user':
      return `${turn}user: ${entry.text}`
    case 'feedback':
      return `${turn}feedback: ${entry.text}`
    case 'observation':
      return `${turn}${entry.actionId} ${entry.tool} ${entry.ok ? 'returned' : 'failed'}: ${entry.text}`
    case 'assistant': {
      const d = entry.decision
      if (d.kind === 'final') return `${turn}assistant answered: ${d.text}`
      if (d.kind === 'ask_user') return `${turn}assistant asked: ${d.question}`
      return `${turn}assistant called ${d.calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ')}`
    }
  }
}

function clipTo(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)} … [${text.length - chars} more characters]`
}
