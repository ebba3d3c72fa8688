/**
 * @module cli/self
 * How a person runs this cordage again, in the hints it prints (approve, reject, resume, reconcile):
 * installed in a project's node_modules, `cordage` is not on PATH but `npx cordage` finds it; from a
 * checkout (or a link onto PATH) it is `cordage`.
 */
import { sep } from 'node:path'

/** @param location a folder of this cordage's code (by default this module's, symlinks resolved) */
export function selfCommand(location: string = import.meta.dirname): string {
  return location.split(sep).includes('node_modules') ? 'npx cordage' : 'cordage'
}

/** The command the hints name. */
export const Self = selfCommand()
