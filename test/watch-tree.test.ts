/**
 * The folder watcher every hot reload path uses (core/host/watch-tree.ts): each save is reported
 * whichever way it is made (write-then-rename, delete and create, in place, vim's backup), save after
 * save; folders made, moved in, removed or replaced later are followed; what the plugin hash ignores is
 * not watched; and a root that goes away is said, never a silent stop.
 *
 * No sleeps: every wait is for a reported change (with a deadline for a lost one). To know that nothing
 * more is on its way from a save, a marker file is written in the same folder and its change awaited:
 * the system reports a folder's changes in order, so everything before the marker has arrived by then.
 */
import assert from 'node:assert/strict'
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { CordageError } from '../core/contracts/errors.ts'
import { shipsInPlugin, walksPluginFolder } from '../core/host/plugin-hash.ts'
import { watchTree, type TreeWatch, type WatchTreeOptions } from '../core/host/watch-tree.ts'
import { saves, type SaveStyle } from './editor-saves.ts'
import { tempDir } from './temp.ts'

type Seen = { change: string | undefined } | { error: CordageError; stopped: boolean }

let open: TreeWatch[] = []
afterEach(() => {
  for (const tree of open) tree.close()
  open = []
})

/** Watch `root` as `cordage dev` watches a plugin folder, keeping what it reports. */
function follow(root: string, options: Partial<WatchTreeOptions> = {}) {
  const seen: Seen[] = []
  const waiting = new Set<{ test: (s: Seen) => boolean; done: (s: Seen) => void }>()
  const push = (s: Seen) => {
    seen.push(s)
    for (const w of waiting)
      if (w.test(s)) {
        waiting.delete(w)
        w.done(s)
      }
  }
  const tree = watchTree(root, {
    folder: walksPluginFolder,
    file: (path) => /\.(ts|json)$/.test(path) && shipsInPlugin(path),
    onChange: (change) => push({ change }),
    onError: (error, stopped) => push({ error, stopped }),
    ...options,
  })
  open.push(tree)
  /** The first report from now on that passes `test`. */
  const next = (test: (s: Seen) => boolean, what: string): Promise<Seen> =>
    new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`${what}: not reported within 10 s; seen ${JSON.stringify(seen)}`)), 10_000)
      waiting.add({
        test,
        done: (s) => {
          clearTimeout(timer)
          done(s)
        },
      })
    })
  let markers = 0
  /** Wait until all a folder had to report has arrived, then forget it. */
  const drain = async (folder: string) => {
    const marker = `marker-${++markers}.ts`
    const rel = join(folder, marker).slice(root.length + 1)
    const arrived = next((s) => 'change' in s && s.change === rel, `marker ${rel}`)
    writeFileSync(join(folder, marker), '')
    await arrived
    seen.length = 0
  }
  return { tree, seen, next, drain }
}

const changeOf = (path: string | undefined) => (s: Seen) => 'change' in s && s.change === path

describe('watchTree', () => {
  it('reports every save of a file, whichever way it is saved, save after save, at the root and below', async () => {
    const root = tempDir('cordage-watch-')
    mkdirSync(join(root, 'lib', 'deep'), { recursive: true })
    const files = ['index.ts', 'lib/deep/rules.ts']
    for (const file of files) writeFileSync(join(root, file), 'start')
    const { next, drain } = follow(root)
    const styles: SaveStyle[] = ['atomic', 'atomic', 'atomic', 'backup', 'backup', 'replace', 'replace', 'inPlace', 'atomic']
    for (const file of files)
      for (const [i, style] of styles.entries()) {
        await drain(join(root, file, '..'))
        const reported = next(changeOf(file), `${file}: ${style} save #${i + 1}`)
        saves[style](join(root, file), `${style} ${i}`)
        await reported
      }
  })

  it('does not watch what the plugin hash leaves out, nor report its files', async () => {
    const root = tempDir('cordage-watch-')
    for (const dir of ['node_modules/dep', 'test', '.git', 'src/fixtures']) mkdirSync(join(root, dir), { recursive: true })
    const { tree, seen, drain } = follow(root)
    assert.deepEqual(tree.folders, [root, join(root, 'src')])
    for (const file of ['README.md', 'index.test.ts', '.eslintrc.json', 'node_modules/dep/index.ts', 'test/a.ts', 'src/fixtures/b.ts'])
      writeFileSync(join(root, file), 'x')
    mkdirSync(join(root, 'tests'))
    await drain(root)
    await drain(join(root, 'src'))
    assert.deepEqual(seen, [])
    assert.deepEqual(tree.folders, [root, join(root, 'src')])
  })

  it('follows folders made, moved in, removed and replaced after the start', async () => {
    const root = tempDir('cordage-watch-')
    const { tree, next, drain } = follow(root)

    // Made, then a file saved in it again and again.
    mkdirSync(join(root, 'lib'))
    // Written before the new folder's watch may be in place: reported as the file, or as the folder.
    let reported = next((s) => changeOf('lib/a.ts')(s) || changeOf(undefined)(s), 'a file in a new folder')
    writeFileSync(join(root, 'lib', 'a.ts'), '1')
    await reported
    for (const i of [2, 3, 4]) {
      await drain(join(root, 'lib'))
      reported = next(changeOf('lib/a.ts'), `lib/a.ts atomic save #${i}`)
      saves.atomic(join(root, 'lib', 'a.ts'), String(i))
      await reported
    }

    // Moved in with files (and a folder of its own): reported as a folder, then watched.
    const outside = tempDir('cordage-watch-outside-')
    mkdirSync(join(outside, 'kit', 'inner'), { recursive: true })
    writeFileSync(join(outside, 'kit', 'inner', 'b.ts'), '1')
    await drain(root)
    reported = next(changeOf(undefined), 'a folder moved in')
    renameSync(join(outside, 'kit'), join(root, 'kit'))
    await reported
    assert.ok(tree.folders.includes(join(root, 'kit', 'inner')), String(tree.folders))
    await drain(join(root, 'kit', 'inner'))
    reported = next(changeOf('kit/inner/b.ts'), 'a save in a folder moved in')
    saves.atomic(join(root, 'kit', 'inner', 'b.ts'), '2')
    await reported

    // Removed: reported (its files are gone), and no longer watched.
    await drain(root)
    reported = next(changeOf(undefined), 'a folder removed')
    rmSync(join(root, 'kit'), { recursive: true })
    await reported
    await drain(root)
    assert.ok(!tree.folders.some((f) => f.startsWith(join(root, 'kit'))), String(tree.folders))

    // Replaced: another folder renamed over an (empty) one at the same path is the one watched.
    mkdirSync(join(root, 'slot'))
    mkdirSync(join(outside, 'slot'))
    writeFileSync(join(outside, 'slot', 'c.ts'), '1')
    await drain(root)
    reported = next(changeOf(undefined), 'a folder replaced')
    renameSync(join(outside, 'slot'), join(root, 'slot'))
    await reported
    await drain(join(root, 'slot'))
    reported = next(changeOf('slot/c.ts'), 'a save in the folder that replaced another')
    saves.atomic(join(root, 'slot', 'c.ts'), '2')
    await reported
  })

  it('says so when the root is renamed away: watch_failed, stopped, nothing watched any more', async () => {
    const parent = tempDir('cordage-watch-')
    const root = join(parent, 'plugin')
    mkdirSync(root)
    const { tree, next } = follow(root)
    const reported = next((s) => 'error' in s, 'the root renamed away')
    renameSync(root, join(parent, 'elsewhere'))
    const seen = await reported
    assert.ok('error' in seen)
    assert.equal(seen.error.code, 'watch_failed')
    assert.equal(seen.stopped, true)
    assert.match(seen.error.message, /plugin was removed or renamed, so it is no longer watched/)
    assert.deepEqual(tree.folders, [])
  })

  it('says so when the root is removed', async () => {
    const root = tempDir('cordage-watch-')
    writeFileSync(join(root, 'index.ts'), '1')
    const { next } = follow(root)
    const reported = next((s) => 'error' in s, 'the root removed')
    rmSync(root, { recursive: true })
    const seen = await reported
    assert.ok('error' in seen && seen.stopped && seen.error.code === 'watch_failed')
  })

  it('follows a root replaced by another folder at the same path', async () => {
    const parent = tempDir('cordage-watch-')
    const root = join(parent, 'plugin')
    mkdirSync(root)
    mkdirSync(join(parent, 'next'))
    writeFileSync(join(parent, 'next', 'index.ts'), '1')
    const { next, drain, seen } = follow(root)
    let reported = next(changeOf(undefined), 'the root replaced')
    renameSync(join(parent, 'next'), root)
    await reported
    await drain(root)
    reported = next(changeOf('index.ts'), 'a save in the new root')
    saves.atomic(join(root, 'index.ts'), '2')
    await reported
    assert.ok(!seen.some((s) => 'error' in s), JSON.stringify(seen))
  })

  it('refuses to start on a folder that is not there (watch_failed), rather than watch nothing', () => {
    const missing = join(tempDir('cordage-watch-'), 'nope')
    assert.throws(
      () => follow(missing),
      (error: CordageError) => error.code === 'watch_failed' && /cannot watch .*nope: it does not exist/.test(error.message),
    )
  })

  it('with recursive off, watches the root alone', async () => {
    const root = tempDir('cordage-watch-')
    mkdirSync(join(root, 'sub'))
    writeFileSync(join(root, 'preset.yml'), 'a')
    const { tree, seen, next, drain } = follow(root, {
      recursive: false,
      folder: undefined,
      file: (p) => p === 'preset.yml' || p.startsWith('marker-'),
    })
    assert.deepEqual(tree.folders, [root])
    writeFileSync(join(root, 'sub', 'preset.yml'), 'x')
    writeFileSync(join(root, 'other.yml'), 'x')
    mkdirSync(join(root, 'made'))
    await drain(root)
    assert.deepEqual(seen, [])
    assert.deepEqual(tree.folders, [root])
    for (const i of [1, 2, 3]) {
      await drain(root)
      const reported = next(changeOf('preset.yml'), `preset.yml atomic save #${i}`)
      saves.atomic(join(root, 'preset.yml'), String(i))
      await reported
    }
  })
})
