/**
 * Paths the model gives, checked against the workspace by the kit's one helper (cordage/kit
 * resolvePathWithin): relative to the root, inside it as given and after every symbolic link, and
 * inside a constrained allow's `pathPrefix` the same two ways, by path segments. `.cordage/` at the
 * root is the harness's own (the edit journal) and is off limits to the model.
 */
import { realpath } from 'node:fs/promises'
import { resolvePathWithin, type PathWithin } from 'cordage/kit'

/** The folder at the workspace root that belongs to the harness, not to the project. */
export const ReservedDir = '.cordage'

export type InsidePath = PathWithin

/**
 * `given` (relative to `root`), checked, within `prefix` when a constrained allow gave one
 * (`io.constraints.pathPrefix`); CordageError `tool_failed` saying why when it is not inside.
 */
export function resolveInside(root: string, given: string, prefix?: string): Promise<InsidePath> {
  return resolvePathWithin(root, given, { prefix, reserved: [ReservedDir] })
}

/** The workspace root with its symbolic links resolved: walks and paths shown to the model start here. */
export async function realRoot(dir: Promise<string>): Promise<string> {
  return realpath(await dir)
}
