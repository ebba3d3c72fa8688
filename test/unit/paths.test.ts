/**
 * core/kit/paths.ts: the one helper that holds a path inside the workspace and inside a constrained
 * allow's `pathPrefix` (issue 29). Compared by segments, after every symbolic link, exactly (no case
 * folding, no Unicode normalisation: a false refusal is allowed, a false allow is not); read and
 * written without following a link that appeared after the check.
 */
import assert from 'node:assert/strict'
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { isPathWithin, readFileWithin, resolvePathWithin, writeFileWithin } from '../../core/kit/paths.ts'
import { tempDir } from '../temp.ts'

const Secret = 'database: prod\n'

/** A workspace with the links an attacker would plant, and a folder outside it. */
function lab() {
  const dir = tempDir('cordage-kit-paths-')
  const root = join(dir, 'ws')
  const outside = join(dir, 'outside')
  for (const folder of ['src/lib', 'config', '.cordage']) mkdirSync(join(root, folder), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(root, 'src/app.js'), 'app\n')
  writeFileSync(join(root, 'config/prod.yml'), Secret)
  writeFileSync(join(outside, 'target.txt'), Secret)
  symlinkSync('../config', join(root, 'src/shared'))
  symlinkSync(outside, join(root, 'src/abs'))
  symlinkSync('lib', join(root, 'src/alias'))
  symlinkSync('../config/new.yml', join(root, 'src/planted'))
  symlinkSync('loop-b', join(root, 'src/loop-a'))
  symlinkSync('loop-a', join(root, 'src/loop-b'))
  symlinkSync('../.cordage', join(root, 'src/journal'))
  return { dir, root, outside }
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'tool_failed', String(error))
    return (error as Error).message
  }
  assert.fail('expected a refusal')
}

describe('isPathWithin', () => {
  it('compares whole segments: a sibling or a longer name is not inside', () => {
    assert.equal(isPathWithin('/w/src', '/w/src'), true)
    assert.equal(isPathWithin('/w/src', '/w/src/a/b.js'), true)
    assert.equal(isPathWithin('/w/src/', '/w/src/a'), true)
    assert.equal(isPathWithin('/w/src', '/w/src-evil/pwn.js'), false)
    assert.equal(isPathWithin('/w/src', '/w/srcfoo.txt'), false)
    assert.equal(isPathWithin('/w/src', '/w'), false)
    assert.equal(isPathWithin('/w/src', '/w/src/../config'), false)
    assert.equal(isPathWithin('/', '/anything'), true)
  })

  it('is exact about case and Unicode forms', () => {
    assert.equal(isPathWithin('/w/src', '/w/SRC/x'), false)
    assert.equal(isPathWithin('/w/caf\u00e9', '/w/cafe\u0301/x'), false)
    assert.equal(isPathWithin('/w/cafe\u0301', '/w/caf\u00e9/x'), false)
    assert.equal(isPathWithin('/w/caf\u00e9', '/w/caf\u00e9/x'), true)
  })
})

describe('resolvePathWithin', () => {
  it('refuses a NUL, an absolute path, an empty one and .. out of the root', async () => {
    const { root } = lab()
    assert.match(await refusal(resolvePathWithin(root, 'src/a\0.js')), /contains a NUL character/)
    assert.match(await refusal(resolvePathWithin(root, '/etc/passwd')), /is absolute/)
    assert.match(await refusal(resolvePathWithin(root, '')), /is empty/)
    assert.match(await refusal(resolvePathWithin(root, '../outside/target.txt')), /is outside the workspace/)
    assert.match(await refusal(resolvePathWithin(root, 'src/../../outside')), /is outside the workspace/)
  })

  it('holds a prefix by segments, in every spelling of it: src, src/, ./src, src/.', async () => {
    const { root } = lab()
    for (const prefix of ['src', 'src/', './src', 'src/.', 'src//']) {
      for (const path of ['src-evil/pwn.js', 'srcfoo.txt', 'src/../config/prod.yml', 'config/prod.yml', 'SRC/app.js', '.'])
        assert.match(
          await refusal(resolvePathWithin(root, path, { prefix })),
          new RegExp(`is outside pathPrefix ${JSON.stringify(prefix)}: policy allows this call only within src,`),
        )
      const inside = await resolvePathWithin(root, 'src/new/deep.js', { prefix })
      assert.deepEqual([inside.shown, inside.exists, inside.real], ['src/new/deep.js', false, join(inside.root, 'src/new/deep.js')])
      assert.equal((await resolvePathWithin(root, 'src', { prefix })).shown, 'src')
    }
  })

  it('follows every link: into a sibling folder or out of the workspace is refused, a link within the prefix is allowed', async () => {
    const { root } = lab()
    const prefix = 'src/'
    assert.match(
      await refusal(resolvePathWithin(root, 'src/shared/prod.yml', { prefix })),
      /is outside pathPrefix "src\/" \(it leads to config\/prod\.yml through a symbolic link\)/,
    )
    assert.match(await refusal(resolvePathWithin(root, 'src/shared/new/file.yml', { prefix })), /leads to config\/new\/file\.yml/)
    assert.match(
      await refusal(resolvePathWithin(root, 'src/abs/target.txt', { prefix })),
      /leads outside the workspace through a symbolic link/,
    )
    assert.match(await refusal(resolvePathWithin(root, 'src/abs/new.txt')), /leads outside the workspace through a symbolic link/)
    assert.match(await refusal(resolvePathWithin(root, 'src/planted', { prefix })), /is a symbolic link to nothing/)
    assert.match(await refusal(resolvePathWithin(root, 'src/planted/x', { prefix })), /is a symbolic link to nothing/)
    assert.match(await refusal(resolvePathWithin(root, 'src/loop-a/x', { prefix })), /is a loop of symbolic links/)
    const alias = await resolvePathWithin(root, 'src/alias/ok.js', { prefix })
    assert.deepEqual([alias.shown, alias.real], ['src/alias/ok.js', join(alias.root, 'src/lib/ok.js')])
  })

  it('a prefix that is itself a link allows nothing through it (name the real folder)', async () => {
    const { root } = lab()
    symlinkSync('lib', join(root, 'src/linked'))
    assert.match(await refusal(resolvePathWithin(root, 'src/linked/x.js', { prefix: 'src/linked' })), /leads to src\/lib\/x\.js/)
    assert.equal((await resolvePathWithin(root, 'src/lib/x.js', { prefix: 'src/lib' })).shown, 'src/lib/x.js')
  })

  it('the prefix "." is the whole workspace; a prefix that is absolute, climbs or holds a NUL is refused', async () => {
    const { root } = lab()
    assert.equal((await resolvePathWithin(root, 'config/prod.yml', { prefix: '.' })).shown, 'config/prod.yml')
    for (const prefix of ['/etc', '../ws/src', 'src/../..', 'src\0', ''])
      assert.match(await refusal(resolvePathWithin(root, 'src/app.js', { prefix })), /is not a path relative to the workspace root/)
  })

  it('keeps the reserved folder out, in any case or Unicode form, as given or through a link', async () => {
    const { root } = lab()
    const reserved = ['.cordage']
    assert.match(
      await refusal(resolvePathWithin(root, '.cordage/edits/x.json', { reserved })),
      /is in \.cordage\/, which belongs to the harness/,
    )
    assert.match(await refusal(resolvePathWithin(root, '.CORDAGE/edits/x.json', { reserved })), /is in \.cordage\//)
    assert.match(
      await refusal(resolvePathWithin(root, 'src/journal/x.json', { reserved })),
      /leads into \.cordage\/ through a symbolic link/,
    )
    assert.equal((await resolvePathWithin(root, 'src/.cordage', { reserved })).shown, 'src/.cordage')
  })

  it('works from a root that is itself reached through a link', async () => {
    const { dir, root } = lab()
    symlinkSync(root, join(dir, 'ws-link'))
    const file = await resolvePathWithin(join(dir, 'ws-link'), 'src/app.js', { prefix: 'src' })
    assert.deepEqual([file.shown, file.exists], ['src/app.js', true])
    assert.equal(file.root, realpathSync(root))
  })
})

describe('readFileWithin and writeFileWithin', () => {
  it("write whole files, creating the missing folders, and keep an existing file's permission bits", async () => {
    const { root } = lab()
    chmodSync(join(root, 'src/app.js'), 0o754)
    await writeFileWithin(await resolvePathWithin(root, 'src/app.js', { prefix: 'src' }), 'new\n')
    assert.equal(readFileSync(join(root, 'src/app.js'), 'utf8'), 'new\n')
    assert.equal(statSync(join(root, 'src/app.js')).mode & 0o777, 0o754)
    const deep = await resolvePathWithin(root, 'src/a/b/c.txt', { prefix: 'src' })
    await writeFileWithin(deep, 'deep\n')
    assert.equal(await readFileWithin(deep), 'deep\n')
    assert.equal(await readFileWithin(await resolvePathWithin(root, 'src/none.txt')), undefined)
    assert.deepEqual(readdirSync(join(root, 'src/a/b')), ['c.txt'], 'no temporary file left')
  })

  it('a folder swapped for a link between the check and the write is refused: nothing lands outside', async () => {
    const { root } = lab()
    const target = await resolvePathWithin(root, 'src/new/prod.yml', { prefix: 'src' })
    symlinkSync('../config', join(root, 'src/new'))
    assert.match(
      await refusal(writeFileWithin(target, 'pwned\n')),
      /changed \(a folder of it became a symbolic link\) after it was checked; nothing was written/,
    )
    assert.equal(readFileSync(join(root, 'config/prod.yml'), 'utf8'), Secret)
    assert.deepEqual(readdirSync(join(root, 'config')), ['prod.yml'])
  })

  it('a file swapped for a link between the check and the write: the link is replaced, its target is not written', async () => {
    const { root } = lab()
    const target = await resolvePathWithin(root, 'src/app.js', { prefix: 'src' })
    rmSync(join(root, 'src/app.js'))
    symlinkSync('../config/prod.yml', join(root, 'src/app.js'))
    await writeFileWithin(target, 'mine\n')
    assert.equal(readFileSync(join(root, 'config/prod.yml'), 'utf8'), Secret)
    assert.equal(lstatSync(join(root, 'src/app.js')).isFile(), true)
    assert.equal(readFileSync(join(root, 'src/app.js'), 'utf8'), 'mine\n')
  })

  it('a read after such a swap is refused, not read through the link', async () => {
    const { root } = lab()
    const file = await resolvePathWithin(root, 'src/app.js', { prefix: 'src' })
    rmSync(join(root, 'src/app.js'))
    symlinkSync('../config/prod.yml', join(root, 'src/app.js'))
    assert.match(await refusal(readFileWithin(file)), /became a symbolic link after it was checked; nothing was read/)
    const inFolder = await resolvePathWithin(root, 'src/lib/x.txt', { prefix: 'src' })
    writeFileSync(join(root, 'config/x.txt'), Secret)
    renameSync(join(root, 'src/lib'), join(root, 'src/lib-old'))
    symlinkSync('../config', join(root, 'src/lib'))
    assert.match(await refusal(readFileWithin(inFolder)), /changed|became a symbolic link/)
  })

  it('every path of up to three segments over a hostile alphabet: what is allowed is written inside src/, nothing else anywhere', async () => {
    const { dir, root } = lab()
    const alphabet = ['src', 'src-evil', 'srcfoo', 'SRC', 'shared', 'abs', 'alias', 'lib', 'planted', 'config', '..', '.']
    const paths = alphabet.flatMap((a) => [a, ...alphabet.flatMap((b) => [`${a}/${b}`, ...alphabet.map((c) => `${a}/${b}/${c}`)])])
    let allowed = 0
    for (const [i, path] of paths.entries()) {
      let target: Awaited<ReturnType<typeof resolvePathWithin>>
      try {
        target = await resolvePathWithin(root, path, { prefix: 'src/', reserved: ['.cordage'] })
      } catch (error) {
        assert.equal((error as { code?: string }).code, 'tool_failed', `${path}: ${error}`)
        continue
      }
      const content = `written ${i}\n`
      try {
        await writeFileWithin(target, content)
      } catch (error) {
        // A folder is not a file, and nothing is created under a file (ENOTDIR, EEXIST): honest failures, not escapes.
        const message = String((error as Error).message)
        assert.ok(/is a folder|ENOTDIR|EEXIST/.test(message), `${path}: ${message}`)
        continue
      }
      allowed++
      assert.equal(await readFileWithin(target), content, path)
    }
    assert.ok(allowed > 10, `some paths are allowed (${allowed})`)
    // Every file this wrote, found without following links, is in the workspace's real src/.
    const written: string[] = []
    const visit = (folder: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name)
        if (entry.isDirectory()) visit(path)
        else if (entry.isFile() && readFileSync(path, 'utf8').startsWith('written ')) written.push(path)
      }
    }
    visit(dir)
    assert.ok(written.length > 0)
    for (const path of written) assert.ok(path.startsWith(join(root, 'src') + '/'), `${path} is outside src/`)
    assert.equal(readFileSync(join(root, 'config/prod.yml'), 'utf8'), Secret)
  })
})
