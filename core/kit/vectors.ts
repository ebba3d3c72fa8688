/**
 * @module kit/vectors
 * What a caller of the `embeddings` service checks before it uses an answer, and the arithmetic it
 * needs. Vectors come from a plugin, often over the network: a wrong count, a wrong length or a NaN
 * would silently skew every ranking made with them, so they are refused whole.
 */
import { CordageError } from '../contracts/errors.ts'

/**
 * The answer of `embed(texts)` as unit-length Float32Arrays, or a `service_output_invalid` error naming
 * what was wrong. Normalised here once so that a dot product is the cosine.
 */
export function checkVectors(value: unknown, count: number, dimensions: number, who: string): Float32Array[] {
  const wrong = (what: string) =>
    new CordageError('service_output_invalid', `${who} answered embeddings that do not fit the contract: ${what}`)
  if (!Array.isArray(value)) throw wrong(`expected an array of ${count} vectors, got ${typeof value}`)
  if (value.length !== count) throw wrong(`expected ${count} vectors (one per text), got ${value.length}`)
  return value.map((v, i) => {
    if (!(Array.isArray(v) || v instanceof Float32Array || v instanceof Float64Array)) throw wrong(`vector ${i} is not an array of numbers`)
    if (v.length !== dimensions) throw wrong(`vector ${i} has ${v.length} numbers, expected ${dimensions}`)
    const out = new Float32Array(dimensions)
    let sum = 0
    for (let d = 0; d < dimensions; d++) {
      const x = v[d]
      if (typeof x !== 'number' || !Number.isFinite(x)) throw wrong(`vector ${i} has a non-finite value at ${d}`)
      out[d] = x
      sum += x * x
    }
    if (sum === 0) throw wrong(`vector ${i} is all zeros`)
    const scale = 1 / Math.sqrt(sum)
    for (let d = 0; d < dimensions; d++) out[d] *= scale
    return out
  })
}

/** Dot product of `a` and row `row` of a row-major matrix of rows `width` wide (default `a.length`). */
export function dotRow(a: Float32Array, matrix: Float32Array, row: number, width = a.length): number {
  const n = Math.min(a.length, width)
  const base = row * width
  // Four sums: independent additions the CPU can overlap; about twice as fast as one running sum.
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let i = 0
  for (; i + 3 < n; i += 4) {
    s0 += a[i] * matrix[base + i]
    s1 += a[i + 1] * matrix[base + i + 1]
    s2 += a[i + 2] * matrix[base + i + 2]
    s3 += a[i + 3] * matrix[base + i + 3]
  }
  for (; i < n; i++) s0 += a[i] * matrix[base + i]
  return s0 + s1 + s2 + s3
}
