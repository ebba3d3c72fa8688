/**
 * `cordage --version` is answered by core/cli/bin.js before it loads tsx (tsx and the CLI's modules are
 * most of a cold start from the repository): a copy of bin.js beside a package.json, with no
 * node_modules anywhere above it, so that loading tsx would fail, still answers. The version it prints
 * is the package's, held equal here to the kernel's, which `cordage` prints otherwise.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { KernelVersion } from '../core/kernel/version.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'core/cli/bin.js')

const cordage = (file: string, ...args: string[]) =>
  spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })

describe('cordage --version', () => {
  it("prints the package's version, which is the kernel's", () => {
    assert.equal(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version, KernelVersion)
    for (const flag of ['--version', '-v']) {
      const result = cordage(bin, flag)
      assert.equal(result.status, 0, result.stderr)
      assert.equal(result.stdout, `cordage ${KernelVersion}\n`)
    }
  })

  it('is answered without loading tsx: a copy of bin.js where tsx cannot be found answers it', () => {
    const dir = tempDir('cordage-bin-')
    mkdirSync(join(dir, 'core/cli'), { recursive: true })
    copyFileSync(bin, join(dir, 'core/cli/bin.js'))
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cordage', version: '9.8.7', type: 'module' }))
    for (const flag of ['--version', '-v']) {
      const result = cordage(join(dir, 'core/cli/bin.js'), flag)
      assert.equal(result.status, 0, result.stderr)
      assert.equal(result.stdout, 'cordage 9.8.7\n')
    }
    // Anything else needs tsx, which this copy cannot find: proof that --version did not load it.
    assert.match(cordage(join(dir, 'core/cli/bin.js'), 'check').stderr, /Cannot find package 'tsx'/)
  })
})
