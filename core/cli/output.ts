/** Where a command writes: readable lines and results to `out`, status and errors to `err`. */
export interface Output {
  out(line: string): void
  err(line: string): void
  color?: boolean
}
