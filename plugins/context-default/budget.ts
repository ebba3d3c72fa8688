/**
 * Fitting items under a token budget. Pinned items always stay. The others are reduced in order of
 * priority (lowest first) and then rank (lowest first: the oldest transcript item, the last paragraph of
 * a source): first each is shortened where it has a short form, and only then are items dropped. A class
 * with a share is first brought under its share of the budget the same way, so reference material cannot
 * crowd out the conversation. Pure: the same items and budget give the same fates.
 */
import type { ItemClass } from './manifest.ts'

export interface Candidate {
  cls: ItemClass
  priority: number
  /** Order within equal priority: the lower goes first. */
  rank: number
  tokens: number
  /** Tokens of the short form, when the item has one. */
  shortTokens?: number
  pinned: boolean
}

export type Fate = 'full' | 'short' | 'dropped'

/**
 * @param fixed tokens of what is always there besides the candidates (system prompt, notes)
 * @param budget the most the whole projection may use; 0 or less for no budget
 * @example fit(items, 40, 1000, { sources: 0.3 }) // → ['full', 'short', 'dropped', ...]
 */
export function fit(items: readonly Candidate[], fixed: number, budget: number, shares: Partial<Record<ItemClass, number>>): Fate[] {
  const fates: Fate[] = items.map(() => 'full')
  if (budget <= 0) return fates
  let total = fixed
  const byClass = new Map<ItemClass, number>()
  for (const item of items) {
    total += item.tokens
    byClass.set(item.cls, (byClass.get(item.cls) ?? 0) + item.tokens)
  }
  const cost = (i: number) => (fates[i] === 'full' ? items[i].tokens : fates[i] === 'short' ? items[i].shortTokens! : 0)
  const set = (i: number, fate: Fate) => {
    const saved = cost(i)
    fates[i] = fate
    const delta = cost(i) - saved
    total += delta
    byClass.set(items[i].cls, byClass.get(items[i].cls)! + delta)
  }
  const order = items
    .map((_, i) => i)
    .filter((i) => !items[i].pinned)
    .sort((a, b) => items[a].priority - items[b].priority || items[a].rank - items[b].rank)

  const reduce = (over: () => number, which: number[]) => {
    for (const i of which) {
      if (over() <= 0) return
      const short = items[i].shortTokens
      if (fates[i] === 'full' && short !== undefined && short < items[i].tokens) set(i, 'short')
    }
    for (const i of which) {
      if (over() <= 0) return
      if (fates[i] !== 'dropped') set(i, 'dropped')
    }
  }

  for (const [cls, share] of Object.entries(shares) as [ItemClass, number | undefined][]) {
    if (share === undefined) continue
    const cap = Math.floor(share * budget)
    reduce(
      () => (byClass.get(cls) ?? 0) - cap,
      order.filter((i) => items[i].cls === cls),
    )
  }
  reduce(() => total - budget, order)
  return fates
}
