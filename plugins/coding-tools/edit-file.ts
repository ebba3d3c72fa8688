/**
 * edit_file: the one tool that changes the workspace (`sideEffect: local`, so policy can ask a person
 * first). Two forms: replace one exact snippet (`find` → `replace`; the snippet must occur exactly once),
 * or write a whole file (`content`). Paths are checked by resolveInside: nothing outside the workspace,
 * not even through a symbolic link, and under a constrained allow nothing outside its `pathPrefix`. The
 * file is read and written by the kit's readFileWithin and writeFileWithin, which do not follow a link
 * that appeared after the check.
 *
 * Its idempotency key is the kernel's default, `<runId>/<actionId>`, not a hash of path and content: the
 * ledger shares keys across runs, and each run has its own workspace, so a content key would let one
 * run's edit stand in for another's and leave the second workspace unedited. Retries of one action keep
 * their key; the edit journal makes a retry that already landed a no-op, and lets `reconcile` check the
 * file for the content the edit produces.
 */
import { z } from 'zod'
import { writes } from './footprint.ts'
import { CordageError, defineTool, type Preview, type Reconciled, type Tool } from 'cordage'
import { lines, unifiedDiff } from './line-diff.ts'
import { readFileWithin, writeFileWithin } from 'cordage/kit'
import { contentHash, readRecord, writeRecord, type EditRecord } from './edit-journal.ts'
import type { Config } from './manifest.ts'
import type { DirOf } from './read-files.ts'
import { resolveInside } from './workspace-path.ts'

const EditInput = z
  .object({
    path: z.string().min(1).describe('File relative to the workspace root.'),
    find: z.string().min(1).optional().describe('Exact text to replace; it must occur exactly once in the file.'),
    replace: z.string().optional().describe('Text that takes the place of find.'),
    content: z.string().optional().describe('The whole new content of the file (instead of find and replace).'),
  })
  .strict()
  .superRefine((args, ctx) => {
    const replacing = args.find !== undefined || args.replace !== undefined
    if (replacing === (args.content !== undefined)) ctx.addIssue({ code: 'custom', message: 'give either find and replace, or content' })
    else if (replacing && (args.find === undefined || args.replace === undefined))
      ctx.addIssue({ code: 'custom', message: 'find and replace go together' })
  })
type EditArgs = z.output<typeof EditInput>

/** A run id and action id from a default idempotency key (`<runId>/<actionId>`). */
const DefaultKey = /^([A-Za-z0-9_-]+)\/([A-Za-z0-9._-]+)$/

export function editFileTool(dirOf: DirOf, config: Config): Tool {
  return defineTool({
    name: 'edit_file',
    description: 'Change a file of the workspace: replace an exact snippet (find, replace), or write the whole file (content).',
    input: EditInput,
    sideEffect: 'local',
    idempotent: true,
    needsApproval: true,
    timeoutMs: 10_000,
    footprint: (args) => writes(args.path),
    // What the edit would do, as a unified diff, without writing anything (shown to whoever approves it).
    preview: async (args, io): Promise<Preview> => {
      const root = await dirOf(io.runId)
      const file = await resolveInside(root, args.path)
      const current = await readFileWithin(file)
      const next = apply(args, current, file.shown)
      if (next.length > config.maxWriteChars)
        throw new CordageError(
          'tool_failed',
          `${file.shown} would have ${next.length} characters; at most ${config.maxWriteChars} are allowed`,
        )
      return previewOf(file.shown, current, next)
    },
    // A constrained allow's pathPrefix (policy `constraints`) is held here: the edit is refused unless
    // the file it writes, after every symbolic link, lies in the prefix folder (cordage/kit paths.ts).
    enforces: ['pathPrefix'],
    run: async (args, io) => {
      const root = await dirOf(io.runId)
      const file = await resolveInside(root, args.path, io.constraints?.pathPrefix)
      const current = await readFileWithin(file)
      const done = await readRecord(root, io.idempotencyKey)
      if (done) {
        const now = contentHash(current)
        if (now === done.after) return result(done, args, true)
        if (now !== done.before)
          throw new CordageError(
            'tool_failed',
            `${file.shown} changed since this edit was first tried; read it again and propose a new edit`,
          )
        // The journal has the intent and the file is as it was: the earlier attempt stopped before writing.
      }
      const next = apply(args, current, file.shown)
      if (next.length > config.maxWriteChars)
        throw new CordageError(
          'tool_failed',
          `${file.shown} would have ${next.length} characters; at most ${config.maxWriteChars} are allowed`,
        )
      const record: EditRecord = { key: io.idempotencyKey, path: file.shown, before: contentHash(current), after: contentHash(next) }
      // Intent first: whatever happens next, reconcile can compare the file with both hashes.
      await writeRecord(root, record)
      try {
        await writeFileWithin(file, next)
      } catch (error) {
        if (error instanceof CordageError) throw error
        throw new CordageError('tool_failed', `cannot write ${file.shown}: ${(error as Error).message}`, { cause: error })
      }
      return result(record, args, false)
    },
    reconcile: async (key): Promise<Reconciled> => {
      const ids = DefaultKey.exec(key)
      if (!ids) return undefined
      const root = await dirOf(ids[1])
      const record = await readRecord(root, key)
      // No intent on record: the call never got as far as touching the file.
      if (!record) return { committed: false }
      const file = await resolveInside(root, record.path)
      const now = contentHash(await readFileWithin(file))
      if (now === record.after) return { committed: true, receipt: receiptOf(record), output: { path: record.path, sha256: record.after } }
      if (now === record.before) return { committed: false }
      return undefined
    },
  })
}

/** The new content of the file, or `tool_failed` with what the model should do instead. */
function apply(args: EditArgs, current: string | undefined, shown: string): string {
  if (args.content !== undefined) return args.content
  const { find, replace } = args as { find: string; replace: string }
  if (current === undefined)
    throw new CordageError('tool_failed', `${shown} does not exist; write it with content instead of find and replace`)
  const first = current.indexOf(find)
  if (first < 0) {
    const hint = current.includes(replace)
      ? '; the file already contains the replacement, so the change may be done already'
      : '; read the file and copy the snippet exactly, whitespace included'
    throw new CordageError('tool_failed', `the snippet to replace is not in ${shown}${hint}`)
  }
  if (current.indexOf(find, first + 1) >= 0) {
    throw new CordageError(
      'tool_failed',
      `the snippet to replace occurs more than once in ${shown}; include more of the surrounding lines so it is unique`,
    )
  }
  return current.slice(0, first) + replace + current.slice(first + find.length)
}

/** A diff larger than this is cut (at a line) so the preview stays within what the kernel accepts (256 KB). */
const MaxDiffBytes = 200 * 1024

function previewOf(shown: string, current: string | undefined, next: string): Preview {
  let diff = unifiedDiff(shown, current, next)
  const added = diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++')).length
  const removed = diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---')).length
  let cut = ''
  if (Buffer.byteLength(diff, 'utf8') > MaxDiffBytes) {
    diff = diff.slice(0, diff.lastIndexOf('\n', MaxDiffBytes / 4) + 1)
    cut = ' (diff shortened)'
  }
  const what =
    current === undefined
      ? `create ${shown} (${lines(next).length} lines)`
      : diff === ''
        ? `leave ${shown} as it is (no change)`
        : `change ${shown}: +${added} -${removed} lines`
  return { summary: `${what}${cut}`, ...(diff === '' ? {} : { diff }) }
}

function receiptOf(record: EditRecord): string {
  return `${record.path}@${record.after.slice(7, 19)}`
}

function result(record: EditRecord, args: EditArgs, already: boolean) {
  const how = args.content !== undefined ? 'wrote' : 'replaced one snippet in'
  return {
    output: { path: record.path, mode: args.content !== undefined ? 'write' : 'replace', sha256: record.after, alreadyApplied: already },
    receipt: receiptOf(record),
    observation: `${already ? 'Already done: ' : ''}${how} ${record.path}.`,
  }
}
