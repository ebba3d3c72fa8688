/**
 * A model service that answers from a script, and keeps the requests it received so tests can check
 * what the model saw.
 */
import { CordageError, type ModelRequest, type ModelResponse, type ModelService } from 'cordage'
import { estimateTokens } from 'cordage/kit'
import type { Config, ScriptEntry } from './manifest.ts'
import { decisionOf } from './script.ts'

/** A received request, without its abort signal. */
export type RecordedRequest = Omit<ModelRequest, 'signal'>

export class ScriptedModel implements ModelService {
  readonly requests: RecordedRequest[] = []
  private failures = new Map<string, number>()
  /** Summary requests answered so far, per run. */
  private summaries = new Map<string, number>()

  /** The output cap a run with a token or cost budget reserves per call (config `maxOutputTokens`); none by default. */
  readonly maxOutputTokens?: number
  /** Prices a reservation estimates cost from (config `prices`); none by default. */
  readonly prices?: { inputPerMTok: number; outputPerMTok: number }

  constructor(
    private entries: ScriptEntry[],
    private config: Omit<Config, 'script' | 'file'>,
  ) {
    if (config.maxOutputTokens !== undefined) this.maxOutputTokens = config.maxOutputTokens
    if (config.prices !== undefined) this.prices = { ...config.prices }
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const { signal, ...recorded } = request
    this.requests.push({ ...recorded, messages: [...request.messages], tools: [...request.tools] })
    if (this.requests.length > this.config.recordRequests) this.requests.shift()

    if (request.purpose === 'summary') return this.summary(request)
    const entry = this.entryFor(request.stepIndex)
    const delay = entry.delayMs ?? this.config.delayMs
    if (delay > 0) await wait(delay, signal)
    if (signal.aborted) throw signal.reason

    if (entry.failFirst) {
      const key = `${request.runId}/${request.stepIndex}`
      const failed = this.failures.get(key) ?? 0
      if (failed < entry.failFirst.times) {
        this.failures.set(key, failed + 1)
        throw new CordageError(
          entry.failFirst.code,
          `scripted ${entry.failFirst.code} (attempt ${failed + 1} of step ${request.stepIndex})`,
        )
      }
    }
    const usage = { ...this.config.usage, ...entry.usage }
    if (this.config.measureInput) usage.inputTokens = inputTokens(request)
    return { decision: decisionOf(entry), usage, model: 'scripted' }
  }

  /** Summaries are scripted apart from steps: a compactor asking mid-step must not take the step's answer. */
  private async summary(request: ModelRequest): Promise<ModelResponse> {
    const list = this.config.summaries
    if (!list.length)
      throw new CordageError('model_permanent', 'a summary was asked for, and the script has no summaries (set summaries: [...])')
    const n = this.summaries.get(request.runId) ?? 0
    this.summaries.set(request.runId, n + 1)
    if (this.config.delayMs > 0) await wait(this.config.delayMs, request.signal)
    return { decision: { kind: 'final', text: list[Math.min(n, list.length - 1)] }, usage: { ...this.config.usage }, model: 'scripted' }
  }

  private entryFor(stepIndex: number): ScriptEntry {
    const entry = this.entries[stepIndex - 1]
    if (entry) return entry
    if (this.config.onExhausted === 'repeat-last' && this.entries.length) return this.entries[this.entries.length - 1]
    throw new CordageError(
      'model_permanent',
      `the script has ${this.entries.length} answers and step ${stepIndex} asked for another (set onExhausted: repeat-last to reuse the last one)`,
    )
  }
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** What a request holds, in estimated tokens: its messages (text and tool calls) and the tools it offers. */
function inputTokens(request: ModelRequest): number {
  let n = 0
  for (const m of request.messages) n += estimateTokens(m.text) + (m.calls?.length ? estimateTokens(JSON.stringify(m.calls)) : 0)
  for (const t of request.tools) n += estimateTokens(`${t.name} ${t.description} ${JSON.stringify(t.inputSchema)}`)
  return n
}
