/**
 * The edit journal: what each edit_file call meant to do, written in the workspace before the file is
 * touched, keyed by the call's idempotency key. With it, a retried call (same key) that already landed
 * is recognised and not applied twice, even when the replacement contains the snippet it replaces; and
 * `reconcile` can tell whether a call whose outcome was never recorded took effect, by comparing the
 * file with the content hashes the journal holds. It lives in the workspace's `.cordage/edits/`, which
 * the tools never show to the model nor let it touch.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ReservedDir } from './workspace-path.ts'

export interface EditRecord {
  key: string
  /** The file, relative to the workspace root. */
  path: string
  /** Content hash of the file before the edit (`absent` when it did not exist). */
  before: string
  /** Content hash the edit produces. */
  after: string
}

/** sha256 of a file's content, or `absent`. */
export function contentHash(content: string | undefined): string {
  return content === undefined ? 'absent' : `sha256:${createHash('sha256').update(content).digest('hex')}`
}

function recordFile(root: string, key: string): string {
  return join(root, ReservedDir, 'edits', `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`)
}

export async function readRecord(root: string, key: string): Promise<EditRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(recordFile(root, key), 'utf8')) as EditRecord
    return record.key === key ? record : undefined
  } catch {
    return undefined
  }
}

export async function writeRecord(root: string, record: EditRecord): Promise<void> {
  await writeAtomic(recordFile(root, record.key), JSON.stringify(record) + '\n')
}

/** Write through a temporary file and a rename, so a reader never sees half a file. */
async function writeAtomic(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temporary = `${path}.tmp-${randomBytes(4).toString('hex')}`
  await writeFile(temporary, content)
  await rename(temporary, path)
}
