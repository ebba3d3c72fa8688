/**
 * @module host/watch-tree
 * Follow the files of a folder (and, recursive, of the folders below it) across every way an editor
 * saves: in place, by writing a temp file and renaming it over (`sed -i`, safe writes), by deleting and
 * creating, or vim-style (rename the original away, write a new file). Each folder is watched on its
 * own, never a file: a watch on a file follows its inode, which a rename-over replaces, and then reports
 * nothing again. This is why `fs.watch(dir, { recursive: true })` is not used: on Linux, Node 20 builds
 * it in JavaScript from watches on files, and hot reload went silent after the first atomic save.
 *
 * Folders created later are watched when they appear (their files are looked at once, for those
 * written before the watch was in place), removed ones are dropped, and one replaced at the same path
 * (renamed over, removed and made again) is watched again; so is the root when another folder already
 * stands in its place as the old one goes. It never stops silently: when the root goes away for good or
 * a watch fails (a system limit on watches), `onError` says so.
 *
 * @example
 * const tree = watchTree('plugins/policy-rules', {
 *   file: (path) => path.endsWith('.ts'),
 *   onChange: (path) => console.log('changed', path ?? '(a folder)'),
 *   onError: (error, stopped) => console.error(error.message, stopped ? '(stopped)' : ''),
 * })
 * tree.close()
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { CordageError } from '../contracts/errors.ts'

export interface WatchTreeOptions {
  /** Watch the folders below the root too, those made later included (default true). Off, only the root's own files. */
  recursive?: boolean
  /** Whether to watch the folder at `path` (relative to the root, `/` between names). Default: every folder. */
  folder?: (path: string) => boolean
  /** Whether a change of the file at `path` (relative to the root, `/` between names) is reported. */
  file: (path: string) => boolean
  /**
   * Something that matters changed: the file at `path`, or, with `path` undefined, a whole folder (one
   * appeared with files in it, went away, or the root was replaced).
   */
  onChange: (path: string | undefined) => void
  /**
   * A folder can no longer be watched, with the `watch_failed` error that says which and why. `stopped`
   * when it is the root: nothing more will be reported, the tree is closed.
   */
  onError: (error: CordageError, stopped: boolean) => void
}

export interface TreeWatch {
  /** The folders watched now (absolute), the root first. */
  readonly folders: string[]
  /** Stop watching. Nothing is reported after it. */
  close(): void
}

/**
 * Watch `root`. @throws CordageError `watch_failed` when the root, or a folder below it, cannot be
 * watched at the start (missing, not a folder, a system limit): better not to start than to miss edits.
 */
export function watchTree(root: string, options: WatchTreeOptions): TreeWatch {
  return new Tree(root, options)
}

interface Watched {
  watcher: FSWatcher
  /** `dev:ino` of the folder when the watch was set: a folder now at that path with another is a new one. */
  id: string
}

class Tree implements TreeWatch {
  private watched = new Map<string, Watched>()
  private closed = false

  constructor(
    private readonly root: string,
    private readonly o: WatchTreeOptions,
  ) {
    try {
      this.arm(root)
    } catch (error) {
      this.close()
      throw watchError(root, error)
    }
  }

  get folders(): string[] {
    return [...this.watched.keys()]
  }

  close(): void {
    this.closed = true
    for (const { watcher } of this.watched.values()) watcher.close()
    this.watched.clear()
  }

  private get recursive(): boolean {
    return this.o.recursive ?? true
  }

  /**
   * Watch `dir`, then (recursive) the folders in it. The watch is set before the folder is read, so a
   * file written meanwhile is either read or reported. Returns whether a file in it matters.
   * @throws what fs.watch or reading the folder throws
   */
  private arm(dir: string): boolean {
    const stat = statSync(dir)
    if (!stat.isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' })
    const id = `${stat.dev}:${stat.ino}`
    // A folder reached twice (a symbolic link to a folder already watched, or back up the tree) is
    // watched once; a watch whose folder has moved here since is dropped, this path now has it.
    for (const [path, w] of this.watched)
      if (w.id === id) {
        if (idOf(path) === id) return false
        this.drop(path)
      }
    const watcher = watch(dir, (event, name) => this.event(dir, watcher, event, name === null ? undefined : String(name)))
    watcher.on('error', (error) => this.lost(dir, watcher, error))
    this.watched.set(dir, { watcher, id })
    let matters = false
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      const rel = this.rel(path)
      if (entry.isDirectory() || entry.isSymbolicLink()) {
        if (this.recursive && this.wanted(path)) matters = this.armBelow(path, true) || matters
        else if (entry.isSymbolicLink() && this.o.file(rel)) matters = true
      } else if (this.o.file(rel)) matters = true
    }
    return matters
  }

  /**
   * {@link arm} for a folder below the root. A folder gone before it could be watched is no error; at
   * the start (`strict`) any other failure throws, later it is reported and the rest goes on.
   */
  private armBelow(dir: string, strict: boolean): boolean {
    try {
      return this.arm(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException)?.code
      if (code === 'ENOENT' || code === 'ENOTDIR') return false
      if (strict) throw error
      this.o.onError(watchError(dir, error), false)
      return false
    }
  }

  private event(dir: string, watcher: FSWatcher, event: string, name: string | undefined): void {
    const own = this.watched.get(dir)
    if (this.closed || own?.watcher !== watcher) return
    if ((event === 'rename' || name === undefined) && idOf(dir) !== own.id) {
      // The folder itself was moved or removed (Linux reports that as a `rename` in it, named after it).
      this.gone(dir)
    } else if (name === undefined) {
      // Nothing named (Node does not promise a name): look at the whole folder again.
      if (this.recursive) for (const entry of entriesOf(dir)) this.entry(join(dir, entry))
      this.dropGoneBelow(dir)
      this.o.onChange(undefined)
    } else {
      const path = join(dir, name)
      if (this.recursive && this.entry(path)) return
      if (this.o.file(this.rel(path))) this.o.onChange(this.rel(path))
    }
  }

  /** Bring the watch of a folder entry up to date. Returns whether it was a folder (already reported when it mattered). */
  private entry(path: string): boolean {
    const id = idOf(path)
    const known = this.watched.get(path)
    if (id && known?.id === id) return true
    if (known) this.drop(path)
    if (id && this.wanted(path)) {
      if (this.armBelow(path, false) || known) this.o.onChange(undefined)
      return true
    }
    if (known) this.o.onChange(undefined)
    return !!(id || known)
  }

  /** The folder at `dir` is no longer the one watched: below the root, its files are gone; the root may have been replaced. */
  private gone(dir: string): void {
    this.drop(dir)
    if (dir !== this.root) {
      this.o.onChange(undefined)
      return
    }
    let error: unknown = new CordageError('watch_failed', `${dir} was removed or renamed, so it is no longer watched`)
    // Replaced by another folder at the same path: watch that one, whose files may all be new.
    if (idOf(dir)) {
      try {
        this.arm(dir)
        this.o.onChange(undefined)
        return
      } catch (armError) {
        error = watchError(dir, armError)
      }
    }
    this.close()
    this.o.onError(error as CordageError, true)
  }

  /** A watch reported an error: its folder (and those below) are no longer followed. */
  private lost(dir: string, watcher: FSWatcher, error: Error): void {
    if (this.closed || this.watched.get(dir)?.watcher !== watcher) return
    this.drop(dir)
    const stopped = dir === this.root
    if (stopped) this.close()
    this.o.onError(watchError(dir, error), stopped)
  }

  /** Stop watching `dir` and every folder below it. */
  private drop(dir: string): void {
    for (const [path, { watcher }] of this.watched)
      if (path === dir || path.startsWith(dir + sep)) {
        watcher.close()
        this.watched.delete(path)
      }
  }

  /** After an event that names nothing: drop the watches of folders below `dir` that are no longer there. */
  private dropGoneBelow(dir: string): void {
    for (const [path, { id }] of this.watched) if (path.startsWith(dir + sep) && idOf(path) !== id) this.drop(path)
  }

  private wanted(path: string): boolean {
    return this.o.folder?.(this.rel(path)) ?? true
  }

  private rel(path: string): string {
    return relative(this.root, path).split(sep).join('/')
  }
}

/** `dev:ino` of the folder at `path` (a symbolic link followed), or undefined when there is no folder there. */
function idOf(path: string): string | undefined {
  try {
    const stat = statSync(path)
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : undefined
  } catch {
    return undefined
  }
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** A failed watch as `watch_failed`, with what to do about a system limit. */
function watchError(dir: string, error: unknown): CordageError {
  const code = (error as NodeJS.ErrnoException)?.code
  const why =
    code === 'ENOSPC'
      ? "the system's limit on file watches is reached: raise it (sysctl fs.inotify.max_user_watches) or watch fewer folders"
      : code === 'EMFILE'
        ? 'too many open files: raise the limit (ulimit -n) or watch fewer folders'
        : code === 'ENOENT'
          ? 'it does not exist'
          : code === 'ENOTDIR'
            ? 'it is not a folder'
            : ((error as Error)?.message ?? String(error))
  return new CordageError('watch_failed', `cannot watch ${dir}: ${why}`, { cause: error })
}
