/**
 * The ways editors and tools save a file, for the hot reload tests. Only `inPlace` keeps the file's
 * inode: the others leave a watch on the old file with nothing more to report, which is how hot reload
 * used to stop after the first save (issue 27, item 8).
 */
import { renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

let temps = 0

export const saves = {
  /** Write a temp file next to it and rename it over the file (`sed -i`, VS Code's and JetBrains' safe write, many libraries' atomic write). */
  atomic(file: string, text: string): void {
    const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${++temps}.tmp`)
    writeFileSync(temp, text)
    renameSync(temp, file)
  },
  /** Delete the file, then create it again. */
  replace(file: string, text: string): void {
    unlinkSync(file)
    writeFileSync(file, text)
  },
  /** Truncate and write the same file. */
  inPlace(file: string, text: string): void {
    writeFileSync(file, text)
  },
  /** vim with `backupcopy=no`: rename the original to a backup, write a new file, delete the backup. */
  backup(file: string, text: string): void {
    renameSync(file, `${file}~`)
    writeFileSync(file, text)
    unlinkSync(`${file}~`)
  },
} as const

export type SaveStyle = keyof typeof saves
