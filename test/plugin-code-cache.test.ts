/**
 * The bundle cache (core/host/plugin-code-cache.ts): with a record on disk, a plugin's content hash is
 * the one a fresh esbuild bundle gives, through every edit that could change what the bundle includes:
 * an edited import, a new helper, a package's version, an import that does not name its file, a
 * record that is garbage or for another folder.
 */
import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { cacheDir } from '../core/host/plugin-code-cache.ts'
import { pluginHash, pluginHashAsync } from '../core/host/plugin-hash.ts'
import { tempDir } from './temp.ts'

const cache = tempDir()
process.env.CORDAGE_CACHE_DIR = cache
const recordsDir = join(cache, 'plugin-code')

/** The hash from a bundle made now, no record read or written. */
function bundled(dir: string): string {
  process.env.CORDAGE_CACHE_DIR = 'off'
  try {
    return pluginHash(dir)
  } finally {
    process.env.CORDAGE_CACHE_DIR = cache
  }
}

const records = () => readdirSync(recordsDir).filter((f) => f.endsWith('.json'))

/** A plugin in `root`/plugin importing `../shared/helper.ts` and the package dep-pad@`version`. */
function plugin(root: string, version = '1.0.0'): { dir: string; helper: string; dep: string } {
  const dir = join(root, 'plugin')
  mkdirSync(dir, { recursive: true })
  mkdirSync(join(root, 'shared'), { recursive: true })
  const helper = join(root, 'shared', 'helper.ts')
  writeFileSync(helper, "export const mark = '!'\n")
  writeFileSync(join(dir, 'index.ts'), "import pad from 'dep-pad'\nimport { mark } from '../shared/helper.ts'\nexport default pad(mark)\n")
  const dep = join(root, 'node_modules', 'dep-pad')
  mkdirSync(dep, { recursive: true })
  writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'dep-pad', version, main: 'index.js' }))
  writeFileSync(join(dep, 'index.js'), 'module.exports = (s) => s\n')
  return { dir, helper, dep }
}

describe('the bundle cache', () => {
  it('keeps what the bundle included, and the next hash that reads it agrees with a fresh bundle', async () => {
    const { dir } = plugin(tempDir())
    const first = pluginHash(dir)
    assert.equal(records().length >= 1, true, 'a record was written')
    assert.equal(pluginHash(dir), first)
    assert.equal(await pluginHashAsync(dir), first)
    assert.equal(bundled(dir), first)
  })

  it('is what the next hash reads: a record listing other imports gives another hash', () => {
    const root = tempDir()
    const { dir } = plugin(root)
    const first = pluginHash(dir)
    const [name] = records().filter((f) => readFileSync(join(recordsDir, f), 'utf8').includes(JSON.stringify(dir)))
    const record = JSON.parse(readFileSync(join(recordsDir, name), 'utf8'))
    record.imports = []
    writeFileSync(join(recordsDir, name), JSON.stringify(record))
    // Without the package line the hash differs: the record, not a bundle, was used.
    assert.notEqual(pluginHash(dir), first)
  })

  it('bundles again when a file it lists changes, and then covers the helper the edit imports', () => {
    const { dir, helper } = plugin(tempDir())
    const before = pluginHash(dir)
    const other = join(dir, '..', 'shared', 'other.ts')
    writeFileSync(other, 'export const more = 1\n')
    writeFileSync(helper, "export { more } from './other.ts'\nexport const mark = '!'\n")
    const edited = pluginHash(dir)
    assert.notEqual(edited, before)
    assert.equal(edited, bundled(dir))
    writeFileSync(other, 'export const more = 2\n')
    const again = pluginHash(dir)
    assert.notEqual(again, edited, 'the new helper is covered')
    assert.equal(again, bundled(dir))
  })

  it('resolves package versions each time', () => {
    const root = tempDir()
    const { dir, dep } = plugin(root)
    const before = pluginHash(dir)
    writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'dep-pad', version: '1.0.1', main: 'index.js' }))
    const after = pluginHash(dir)
    assert.notEqual(after, before)
    assert.equal(after, bundled(dir))
  })

  it('never keeps a bundle with an import that does not name its file, or one left unresolved', () => {
    for (const source of ["import { x } from './util'\nexport default x\n", "export const later = () => import('./later.ts')\n"]) {
      const root = tempDir()
      const dir = join(root, 'p')
      mkdirSync(dir)
      writeFileSync(join(dir, 'util.ts'), 'export const x = 1\n')
      writeFileSync(join(dir, 'index.ts'), source)
      const before = new Set(records())
      const first = pluginHash(dir)
      assert.deepEqual(
        records().filter((f) => !before.has(f)),
        [],
        `no record for ${JSON.stringify(source)}`,
      )
      // What a kept list would have missed: a file that now takes the import.
      mkdirSync(join(dir, 'util'))
      writeFileSync(join(dir, 'later.ts'), 'export const y = 2\n')
      assert.equal(pluginHash(dir), bundled(dir))
      assert.equal(typeof first, 'string')
    }
  })

  it('ignores a record that is not JSON, has another shape, or is for another folder, and writes a good one', () => {
    const { dir } = plugin(tempDir())
    const first = pluginHash(dir)
    const [name] = records().filter((f) => readFileSync(join(recordsDir, f), 'utf8').includes(JSON.stringify(dir)))
    const file = join(recordsDir, name)
    const good = readFileSync(file, 'utf8')
    for (const bad of [
      '{ not json',
      '[]',
      JSON.stringify({ ...JSON.parse(good), inputs: [['relative.ts', 'x']] }),
      JSON.stringify({ ...JSON.parse(good), dir: '/elsewhere' }),
      JSON.stringify({ ...JSON.parse(good), format: 0 }),
    ]) {
      writeFileSync(file, bad)
      assert.equal(pluginHash(dir), first, bad.slice(0, 40))
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).dir, dir, 'rewritten')
    }
  })

  it('is off with CORDAGE_CACHE_DIR=off, under XDG_CACHE_HOME otherwise', () => {
    assert.equal(cacheDir({ CORDAGE_CACHE_DIR: 'off' }), undefined)
    assert.equal(cacheDir({ CORDAGE_CACHE_DIR: '/c' }), '/c/plugin-code')
    assert.equal(cacheDir({ XDG_CACHE_HOME: '/x' }), '/x/cordage/plugin-code')
  })
})
