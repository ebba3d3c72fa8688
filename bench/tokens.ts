/**
 * How far the token estimates are from a real tokenizer (o200k_base, the encoding of gpt-4o, gpt-4.1,
 * the o-series and gpt-5) on prose, code, JSON and CJK text: characters / 4 (the count before
 * 2026-12-02), the kit's estimate (core/kit/tokens.ts) and that estimate calibrated on reported usage
 * (core/kit/token-calibration.ts). The corpus is bench/tokens/ (README there: what it is and where it
 * came from); nothing is downloaded.
 *
 *   npm run bench:tokens                  # the held-out set (the figures in docs/concepts/context.md)
 *   npm run bench:tokens -- --set tuning  # the set the rates were fitted on
 *   npm run bench:tokens -- --tune        # fit the rates on the tuning set again and print them
 *
 * Error % is (estimated total - o200k total) / o200k total over the category, signed (negative: the
 * estimate undercounts, so compaction would start late); in brackets the mean of each text's absolute
 * error. "Calibrated" counts each text with the scale learnt from the texts before it in the same
 * category, as an adapter's counter would from the calls before (the provider's count being o200k's).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { countTokens as cl100kCount } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { CalibratedCounter, EstimateCounter, estimateWith, Rates, type EstimateRates } from '../core/kit/index.ts'

const Categories = ['prose', 'code', 'json', 'cjk'] as const
const here = join(import.meta.dirname, 'tokens')

// Special-token strings in a text are counted as the text they are, as a provider counts user input.
const o200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() })
const cl100k = (text: string) => cl100kCount(text, { disallowedSpecial: new Set() })

interface Text {
  text: string
  tokens: number
}

type Tokenizer = (text: string) => number

function load(set: string, tokenizer: Tokenizer = o200k): Map<string, Text[]> {
  const out = new Map<string, Text[]>()
  for (const category of Categories) {
    const texts = readFileSync(join(here, set, `${category}.txt`), 'utf8')
      .split(/\n%%%%\n/)
      .map((t) => t.trim())
      .filter(Boolean)
    if (texts.length < 3) throw new Error(`bench/tokens/${set}/${category}.txt has ${texts.length} texts; expected several`)
    out.set(
      category,
      texts.map((text) => ({ text, tokens: tokenizer(text) })),
    )
  }
  return out
}

interface Score {
  /** Signed error of the category's total, in %. */
  total: number
  /** Mean absolute error per text, in %. */
  mean: number
}

function score(texts: Text[], estimate: (text: string) => number): Score {
  let estimated = 0
  let actual = 0
  let abs = 0
  for (const t of texts) {
    const e = estimate(t.text)
    estimated += e
    actual += t.tokens
    abs += Math.abs(e - t.tokens) / t.tokens
  }
  return { total: (100 * (estimated - actual)) / actual, mean: (100 * abs) / texts.length }
}

function calibratedScore(texts: Text[], tokenizer: Tokenizer): Score {
  // Texts here are a few hundred tokens: every one is a call worth learning from.
  const counter = new CalibratedCounter(EstimateCounter, { minTokens: 0 })
  return score(texts, (text) => {
    const n = counter.count(text)
    counter.observe(EstimateCounter.count(text), tokenizer(text))
    return n
  })
}

const pct = (s: Score) => `${s.total >= 0 ? '+' : ''}${s.total.toFixed(1)}% (${s.mean.toFixed(1)})`

function table(set: string, tokenizer: Tokenizer, name: string): void {
  const data = load(set, tokenizer)
  const rows = [['category', 'texts', `tokens (${name})`, 'chars/4 error %', 'new fallback error %', 'calibrated error %']]
  for (const [category, texts] of data) {
    rows.push([
      category,
      String(texts.length),
      String(texts.reduce((n, t) => n + t.tokens, 0)),
      pct(score(texts, (t) => Math.ceil(t.length / 4))),
      pct(score(texts, (t) => estimateWith(t, Rates))),
      pct(calibratedScore(texts, tokenizer)),
    ])
  }
  console.log(`\nset: bench/tokens/${set}, against ${name} (error of the total, signed; in brackets the mean absolute error per text)\n`)
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  rows.forEach((r, k) => {
    console.log(`| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`)
    if (k === 0) console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
  })
}

/** Coordinate descent over a grid of each rate, on the tuning set only: the mean over categories of the mean error per text, an undercount counting double. */
function tune(): void {
  const data = load('tuning')
  // An undercount weighs twice an overcount: counting low is what makes compaction start late.
  const loss = (rates: EstimateRates) => {
    let sum = 0
    for (const texts of data.values()) {
      let category = 0
      for (const t of texts) {
        const e = (estimateWith(t.text, rates) - t.tokens) / t.tokens
        category += e >= 0 ? e : -2 * e
      }
      sum += (100 * category) / texts.length
    }
    return sum / data.size
  }
  const grid: Record<keyof EstimateRates, number[]> = {
    // Within what a byte-pair vocabulary makes plausible, so a small tuning set cannot push a rate anywhere.
    word: [3, 4, 5, 6, 8, 10, 12, 16],
    wordFree: [0, 2, 4, 6, 7, 8, 9, 10],
    digits: [1, 2, 3, 4],
    punctuation: [1, 1.5, 2, 2.5, 3, 3.5, 4],
    spaces: [1, 2, 4, 8, 16],
    newline: [0, 0.25, 0.5, 0.75, 1],
    cjk: [0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 1],
    other: [0.5, 1, 1.5, 2],
  }
  let best: EstimateRates = { ...Rates }
  let bestLoss = loss(best)
  for (let round = 0; round < 4; round++) {
    for (const key of Object.keys(grid) as (keyof EstimateRates)[]) {
      for (const value of grid[key]) {
        const candidate = { ...best, [key]: value }
        const l = loss(candidate)
        if (l < bestLoss - 1e-9) {
          best = candidate
          bestLoss = l
        }
      }
    }
  }
  console.log(`fitted on bench/tokens/tuning: mean absolute error per text ${bestLoss.toFixed(2)}%`)
  console.log(JSON.stringify(best))
}

const { values } = parseArgs({ options: { set: { type: 'string', default: 'held-out' }, tune: { type: 'boolean', default: false } } })
if (values.tune) tune()
else if (values.set !== 'held-out' && values.set !== 'tuning') {
  console.error(`--set must be held-out or tuning, got ${JSON.stringify(values.set)}`)
  process.exit(2)
} else {
  table(values.set, o200k, 'o200k_base')
  // A tokenizer the estimate was not fitted to, as a provider whose tokenizer is not public would be:
  // what calibration on its reported counts is for.
  table(values.set, cl100k, 'cl100k_base')
}
