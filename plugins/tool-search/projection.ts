/**
 * @module tool-search/projection
 * A random Gaussian projection of vectors to a few dimensions (Johnson–Lindenstrauss): dot products of
 * the projected vectors estimate those of the originals. The vector index scans the short sketches of
 * every tool to pick candidates, then ranks the candidates exactly, so a search at 10,000 tools reads
 * 64 numbers per tool instead of 512. The matrix comes from a fixed seed: the same vectors give the
 * same sketches in every process.
 */

export class Projection {
  /** Row-major, `width` rows of `dimensions`. */
  private readonly matrix: Float32Array

  constructor(
    readonly dimensions: number,
    readonly width: number,
    seed = 0x5eed,
  ) {
    this.matrix = new Float32Array(width * dimensions)
    let state = seed >>> 0 || 1
    // xorshift32 and Box–Muller: no dependency, and reproducible across platforms.
    const uniform = () => {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      return ((state >>> 0) + 0.5) / 4294967296
    }
    for (let i = 0; i < this.matrix.length; i++) this.matrix[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
  }

  /** Writes the sketch of `vector` into `out` at `offset` (`width` numbers). */
  project(vector: Float32Array, out: Float32Array, offset = 0): void {
    const { dimensions, matrix } = this
    for (let r = 0; r < this.width; r++) {
      const base = r * dimensions
      let s = 0
      for (let d = 0; d < dimensions; d++) s += matrix[base + d] * vector[d]
      out[offset + r] = s
    }
  }
}
