/**
 * What a call reserves, from what the model and the tool declare. A declaration that is not
 * non-negative numbers makes a reservation no budget can hold: the call is refused (fail closed).
 */
import type { MeterCall, Reservation } from 'cordage'
import { round } from './available.ts'

const figure = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0

/**
 * A model call reserves the step's context tokens plus the model's output cap (`maxOutputTokens`),
 * and the cost of both at the model's prices when it declares them. Undefined when the model declares
 * no cap (its calls are checked at the boundaries only); a string names what cannot be read.
 */
export function modelReservation(call: Extract<MeterCall, { kind: 'model' }>): Reservation | string | undefined {
  const cap = call.maxOutputTokens
  if (cap === undefined) return undefined
  if (typeof cap !== 'number' || !Number.isSafeInteger(cap) || cap < 0)
    return `the model declares maxOutputTokens ${String(cap)}, which is not a non-negative integer`
  const prices = call.prices as { inputPerMTok?: unknown; outputPerMTok?: unknown } | undefined
  let costUsd = 0
  if (prices !== undefined) {
    if (!figure(prices?.inputPerMTok) || !figure(prices?.outputPerMTok))
      return 'the model declares prices that are not non-negative numbers (inputPerMTok, outputPerMTok)'
    costUsd = round((call.contextTokens * prices.inputPerMTok + cap * prices.outputPerMTok) / 1_000_000)
  }
  return { kind: 'model', tokens: Math.ceil(call.contextTokens) + cap, costUsd }
}

/** A tool call reserves its declared `cost`; undefined when it declares none (or nothing). */
export function toolReservation(call: Extract<MeterCall, { kind: 'tool' }>): Reservation | string | undefined {
  const cost = call.cost as { tokens?: unknown; costUsd?: unknown } | undefined | null
  if (cost === undefined) return undefined
  const tokens = cost?.tokens ?? 0
  const costUsd = cost?.costUsd ?? 0
  if (typeof cost !== 'object' || cost === null || !figure(tokens) || !figure(costUsd))
    return `${call.tool} declares a cost that is not { tokens?, costUsd? } of non-negative numbers`
  if (tokens === 0 && costUsd === 0) return undefined
  return { actionId: call.actionId, kind: 'tool', tokens: Math.ceil(tokens), costUsd }
}
