/**
 * @module wire/prices
 * Usage feeds the token and cost budgets; the cost comes from a price table in the adapter's config,
 * since providers report tokens, not dollars.
 */
import { Schema } from 'cordis'

export interface Prices {
  /** US dollars per million input tokens. */
  inputPerMTok: number
  /** US dollars per million output tokens. */
  outputPerMTok: number
  /** Per million input tokens read from the provider's prompt cache; defaults to the input price. */
  cachedInputPerMTok?: number
  /** Per million input tokens written to the prompt cache (Anthropic); defaults to the input price. */
  cacheWritePerMTok?: number
}

export const PricesSchema = Schema.object({
  inputPerMTok: Schema.number().min(0).default(0).description('US dollars per million input tokens.'),
  outputPerMTok: Schema.number().min(0).default(0).description('US dollars per million output tokens.'),
  cachedInputPerMTok: Schema.number().min(0).description('Per million input tokens read from the prompt cache (default: the input price).'),
  cacheWritePerMTok: Schema.number().min(0).description('Per million input tokens written to the prompt cache (default: the input price).'),
}).default({ inputPerMTok: 0, outputPerMTok: 0 } as never)

export interface TokenCounts {
  /** Input tokens billed at the plain input price. */
  input: number
  cachedInput?: number
  cacheWrite?: number
  output: number
}

/** The cost in US dollars, rounded to a millionth of a cent so sums stay readable. */
export function costOf(tokens: TokenCounts, prices: Prices): number {
  const perToken = (perMTok: number) => perMTok / 1_000_000
  const cost =
    tokens.input * perToken(prices.inputPerMTok) +
    (tokens.cachedInput ?? 0) * perToken(prices.cachedInputPerMTok ?? prices.inputPerMTok) +
    (tokens.cacheWrite ?? 0) * perToken(prices.cacheWritePerMTok ?? prices.inputPerMTok) +
    tokens.output * perToken(prices.outputPerMTok)
  return Math.round(cost * 1e8) / 1e8
}
