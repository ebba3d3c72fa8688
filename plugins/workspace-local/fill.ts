/**
 * Creating a workspace so that nobody ever sees it half made: the template is copied into a private
 * folder beside the final one, which is then renamed into place. A rename is atomic on one file
 * system, so a second process asking for the same run either loses the race (and uses the winner's
 * directory) or finds it complete; a crash mid-copy leaves only a stray `.tmp-` folder, never a
 * workspace with half its files.
 */
import { cp, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Make `target` (a directory inside `root`) exist, filled from `template` when given. */
export async function createFilled(root: string, target: string, name: string, template: string | undefined): Promise<void> {
  if (await isDirectory(target)) return
  await mkdir(root, { recursive: true })
  const staging = await mkdtemp(join(root, `.tmp-${name}-`))
  try {
    // Symlinks in the template are copied as links, as they are; the tools check every path they
    // touch against the workspace, so a link pointing out of it is refused there.
    if (template) await cp(template, staging, { recursive: true, verbatimSymlinks: true, errorOnExist: true })
    await rename(staging, target)
  } catch (error) {
    await rm(staging, { recursive: true, force: true })
    // Another process (or another call in this one) renamed its copy into place first: use that one.
    if (await isDirectory(target)) return
    throw error
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}
