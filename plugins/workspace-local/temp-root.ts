/**
 * A root in the operating system's temporary folder, for workspaces nobody needs to keep. The folder is
 * shared by every user of the machine, so the root is named after the user (`cordage-workspaces-<uid>`)
 * and checked before use: a real directory (not a link someone planted), owned by this user, private
 * to them. Its path depends only on the temporary folder and the user, so every process of this user
 * finds the same workspaces, and a run approved from another shell works on the same files.
 */
import { chmodSync, lstatSync, mkdirSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { CordageError } from 'cordage'

/** `<tmpdir>/cordage-workspaces-<uid>`, created private to the user when missing. */
export function tempRoot(): string {
  const uid = process.getuid?.()
  const root = join(tmpdir(), `cordage-workspaces-${uid ?? userInfo().username}`)
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const info = lstatSync(root)
  if (!info.isDirectory()) refuse(root, 'is not a directory (a symbolic link, or a file)')
  if (uid !== undefined) {
    if (info.uid !== uid) refuse(root, `belongs to user ${info.uid}, not to this user (${uid})`)
    // Created by an earlier version or with another umask: make it private again, it is ours.
    if ((info.mode & 0o077) !== 0) chmodSync(root, 0o700)
  }
  return root
}

function refuse(root: string, why: string): never {
  throw new CordageError(
    'plugin_config_invalid',
    `workspace-local: the temporary root ${root} ${why}; remove it or set root instead of temporary`,
  )
}
