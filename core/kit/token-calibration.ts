/**
 * @module token-calibration
 * A token count for a model whose tokenizer is not public (Anthropic's) or not known (a model on an
 * OpenAI-compatible server): the kit's estimate, scaled by what the provider reported. After each call
 * the adapter compares the input tokens the provider counted with the estimate of the same request; the
 * ratio of their sums over the last calls becomes the scale. It is bounded, so a provider that reports
 * nonsense (or nothing) cannot make every message look free or huge, and kept in steps of 5%, so it
 * settles after a few calls instead of moving at every one (each move makes context plugins count again).
 */
import type { ModelRequest, ModelService, TokenCounter } from '../contracts/services/model.ts'
import { EstimateCounter, messageTokens } from './tokens.ts'

export interface CalibrationOptions {
  /** Bounds of the scale. */
  min: number
  max: number
  /** How many recent calls the ratio is taken over. */
  calls: number
  /** The scale moves in steps of this. */
  step: number
  /**
   * Calls whose estimate is below this are not used: in a small request the provider's fixed framing
   * (a tool-use preamble of a few hundred tokens, for one) outweighs the text.
   */
  minTokens: number
}

export const DefaultCalibration: Readonly<CalibrationOptions> = Object.freeze({ min: 0.5, max: 2.5, calls: 16, step: 0.05, minTokens: 200 })

export class CalibratedCounter implements TokenCounter {
  readonly name: string
  revision = 0
  private scale = 1
  private samples: { estimated: number; reported: number }[] = []
  private options: CalibrationOptions

  constructor(
    readonly base: TokenCounter = EstimateCounter,
    options: Partial<CalibrationOptions> = {},
  ) {
    this.name = `${base.name} calibrated`
    this.options = { ...DefaultCalibration, ...options }
  }

  /** The scale applied to the base count now. */
  get factor(): number {
    return this.scale
  }

  count(text: string): number {
    const n = this.base.count(text)
    // Less a hair: 10 × 1.1 is 11.000000000000002 in floating point, and 11 tokens, not 12.
    return this.scale === 1 ? n : Math.ceil(n * this.scale - 1e-9)
  }

  /**
   * One call: `estimated` is the base count of what was sent, `reported` the input tokens the provider
   * says it read. Calls without a usable report (0, not a number) are ignored.
   */
  observe(estimated: number, reported: number): void {
    const { min, max, calls, step, minTokens } = this.options
    if (!(estimated >= minTokens) || !Number.isFinite(reported) || reported <= 0) return
    this.samples.push({ estimated, reported })
    if (this.samples.length > calls) this.samples.shift()
    let e = 0
    let r = 0
    for (const s of this.samples) {
      e += s.estimated
      r += s.reported
    }
    const bounded = Math.min(max, Math.max(min, r / e))
    const scale = Math.round(bounded / step) * step
    if (Math.abs(scale - this.scale) < step / 2) return
    this.scale = Number(scale.toFixed(4))
    this.revision++
  }
}

/** What a request holds in `counter`'s tokens: its messages (frame, text, calls) and the tools it offers. */
export function requestTokens(request: Pick<ModelRequest, 'messages' | 'tools'>, counter: TokenCounter = EstimateCounter): number {
  let n = 0
  for (const m of request.messages) n += messageTokens(m, counter)
  for (const t of request.tools) n += counter.count(`${t.name} ${t.description} ${JSON.stringify(t.inputSchema)}`)
  return n
}

/**
 * `model` with a calibrated counter as its `tokens`: each answer's reported input tokens tune it. For
 * a model adapter whose provider has no public tokenizer.
 * @example ctx.set('model', calibrated(new AnthropicMessagesModel(config)))
 */
export function calibrated(model: ModelService, counter: CalibratedCounter = new CalibratedCounter()): ModelService {
  return {
    tokens: counter,
    async respond(request) {
      const estimated = requestTokens(request, counter.base)
      const response = await model.respond(request)
      counter.observe(estimated, response?.usage?.inputTokens)
      return response
    },
  }
}
