/**
 * Names and descriptions of distractor tools, made from a small business vocabulary: a verb, a record
 * kind and a facet (`find_invoice_history`: "Find the history of invoices in the billing system"), so
 * that a tool search sees names and descriptions shaped like real ones, sharing words with each other.
 * 16 verbs x 30 kinds x 12 facets = 5760 combinations; a seed picks and orders them.
 */

interface Kind {
  word: string
  plural: string
  system: string
}

const Verbs: [string, string][] = [
  ['list', 'List'],
  ['find', 'Find'],
  ['get', 'Get'],
  ['search', 'Search'],
  ['lookup', 'Look up'],
  ['summarize', 'Summarize'],
  ['count', 'Count'],
  ['check', 'Check'],
  ['preview', 'Preview'],
  ['fetch', 'Fetch'],
  ['compare', 'Compare'],
  ['estimate', 'Estimate'],
  ['describe', 'Describe'],
  ['audit', 'Audit'],
  ['trace', 'Trace'],
  ['browse', 'Browse'],
]

const kind = (word: string, system: string, plural = `${word}s`): Kind => ({ word, plural, system })
const Kinds: Kind[] = [
  kind('invoice', 'billing system'),
  kind('order', 'order management system'),
  kind('shipment', 'logistics platform'),
  kind('vendor', 'procurement portal'),
  kind('contract', 'contract repository'),
  kind('customer', 'CRM'),
  kind('ticket', 'help desk'),
  kind('payment', 'payments ledger'),
  kind('refund', 'billing system'),
  kind('warehouse', 'logistics platform'),
  kind('supplier', 'procurement portal'),
  kind('employee', 'HR system'),
  kind('budget', 'finance planning tool'),
  kind('forecast', 'finance planning tool'),
  kind('campaign', 'marketing suite'),
  kind('lead', 'CRM'),
  kind('quote', 'sales desk'),
  kind('subscription', 'billing system'),
  kind('asset', 'asset register'),
  kind('license', 'asset register'),
  kind('meeting', 'calendar'),
  kind('project', 'project tracker'),
  kind('expense', 'expense tool'),
  kind('payroll', 'HR system', 'payroll runs'),
  kind('inventory', 'warehouse system', 'inventory items'),
  kind('return', 'order management system'),
  kind('claim', 'insurance desk'),
  kind('region', 'sales desk'),
  kind('product', 'product catalog'),
  kind('account', 'general ledger'),
]

const Facets: [string, (k: Kind) => string][] = [
  ['status', (k) => `the status of ${k.plural}`],
  ['history', (k) => `the history of ${k.plural}`],
  ['by_region', (k) => `${k.plural} grouped by region`],
  ['by_date', (k) => `${k.plural} for a date range`],
  ['totals', (k) => `totals across ${k.plural}`],
  ['details', (k) => `the details of one ${k.word}`],
  ['owners', (k) => `who owns each of the ${k.plural}`],
  ['notes', (k) => `internal notes on ${k.plural}`],
  ['trends', (k) => `month-over-month trends in ${k.plural}`],
  ['changes', (k) => `recent changes to ${k.plural}`],
  ['overdue', (k) => `overdue ${k.plural}`],
  ['summary', (k) => `a short summary of ${k.plural}`],
]

/** The three argument shapes a distractor takes, by the facet it has. */
export type Shape = 'query' | 'id' | 'range'

export interface FillerSpec {
  name: string
  description: string
  kind: string
  plural: string
  shape: Shape
}

export const Combinations = Verbs.length * Kinds.length * Facets.length

/** Every distractor, in the order `seed` gives: the same seed, the same list. */
export function* fillerCandidates(seed: number): Generator<FillerSpec> {
  for (const i of shuffled(Combinations, seed)) yield spec(i)
}

function spec(i: number): FillerSpec {
  const [verb, Verb] = Verbs[i % Verbs.length]
  const k = Kinds[Math.floor(i / Verbs.length) % Kinds.length]
  const [facet, phrase] = Facets[Math.floor(i / (Verbs.length * Kinds.length))]
  const shape: Shape = facet === 'details' ? 'id' : facet === 'by_date' || facet === 'trends' ? 'range' : 'query'
  return {
    name: `${verb}_${k.word}_${facet}`,
    description: `${Verb} ${phrase(k)} in the ${k.system}. Read-only.`,
    kind: k.word,
    plural: k.plural,
    shape,
  }
}

/**
 * 0..n-1 in an order fixed by `seed`: a Fisher-Yates shuffle driven by a linear congruential generator
 * (its high bits, through the division), good enough to spread names and the same on every platform.
 */
function shuffled(n: number, seed: number): number[] {
  const out = Array.from({ length: n }, (_, i) => i)
  let state = seed >>> 0
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 4294967296
  }
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}
