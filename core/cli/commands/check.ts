/**
 * @module cli/commands/check
 * `cordage check`: load a preset as a run would, and say what each agent would load, running nothing.
 */
import { relative } from 'node:path'
import { ExitCodes } from '../exit-codes.ts'
import { open } from '../open.ts'
import type { Handler } from '../output.ts'

export const check: Handler = async ({ flags }, io) => {
  const app = await open(io, flags)
  try {
    for (const name of app.agentNames()) {
      const plugins = app.pluginsOf(name)
      if (flags.json) io.out(JSON.stringify({ agent: name, plugins }))
      else
        io.out(
          `agent ${name}: ${Object.entries(plugins)
            .map(([n, v]) => `${n}@${v}`)
            .join(', ')}`,
        )
    }
    if (!flags.json && app.lockFile) io.out(`locked by ${relative(process.cwd(), app.lockFile) || app.lockFile}`)
    if (!flags.json) io.out(`preset ${app.preset.shown} is valid`)
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}
