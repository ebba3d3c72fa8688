/**
 * @module cli/commands/lock
 * `cordage lock`: write the preset's lock file (the work is in cli/lock.ts, loaded on demand).
 */
import { ExitCodes } from '../exit-codes.ts'
import { presetFile } from '../open.ts'
import type { Handler } from '../output.ts'

export const lock: Handler = async ({ flags }, io) => {
  const file = presetFile(flags)
  const { lockPreset } = await import('../lock.ts')
  for (const line of await lockPreset(file, !!flags.json)) io.out(line)
  return ExitCodes.ok
}
