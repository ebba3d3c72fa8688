/**
 * @module embeddings-openai/response
 * The body of a /v1/embeddings answer, checked before anything is read from it. A vector may come as
 * numbers (`encoding_format: "float"`, which this plugin asks for) or as base64 of little-endian
 * float32 (what the official SDK asks for by default, and what some compatible servers send anyway).
 */
import { z } from 'zod'

export const EmbeddingList = z.object({
  data: z
    .array(
      z.object({
        index: z.number().int().min(0),
        embedding: z.union([z.array(z.number()), z.string()]),
      }),
    )
    .min(1),
  model: z.string().optional(),
  usage: z.object({ prompt_tokens: z.number().optional(), total_tokens: z.number().optional() }).optional(),
})
export type EmbeddingList = z.infer<typeof EmbeddingList>

/** The vectors in input order; undefined at an index the answer lacks (or gave twice). */
export function vectorsOf(list: EmbeddingList, count: number): (number[] | Float32Array | undefined)[] {
  const out: (number[] | Float32Array | undefined)[] = new Array(count).fill(undefined)
  const seen = new Set<number>()
  for (const item of list.data) {
    if (item.index >= count || seen.has(item.index)) return new Array(count).fill(undefined)
    seen.add(item.index)
    out[item.index] = typeof item.embedding === 'string' ? fromBase64(item.embedding) : item.embedding
  }
  return out
}

function fromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64')
  const out = new Float32Array(Math.floor(bytes.length / 4))
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4)
  return out
}
