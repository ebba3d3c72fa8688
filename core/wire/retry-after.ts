/**
 * @module wire/retry-after
 * How long a provider asks us to wait before trying again.
 */

/**
 * From `retry-after-ms` (OpenAI's millisecond form) or `retry-after` (seconds, or an HTTP date).
 * Undefined when the response gives no usable hint.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms'))
  if (headers.has('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
