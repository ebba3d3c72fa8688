/**
 * @module cli/self
 * How a person runs this cordage again, in the hints it prints (approve, reject, resume, reconcile):
 * installed in a project's node_modules, `cordage` is not on PATH but `npx cordage` finds it; from a
 * checkout started through npx (as its README does), the same; from a checkout otherwise (or a link
 * onto PATH) it is `cordage`.
 */
import { sep } from 'node:path'

/**
 * @param location a folder of this cordage's code (by default this module's, symlinks resolved)
 * @param env the environment: npm sets `npm_command=exec` for what `npx` (or `npm exec`) starts
 */
export function selfCommand(location: string = import.meta.dirname, env: NodeJS.ProcessEnv = process.env): string {
  return location.split(sep).includes('node_modules') || env.npm_command === 'exec' ? 'npx cordage' : 'cordage'
}

/** The command the hints name. */
export const Self = selfCommand()
