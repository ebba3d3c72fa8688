/**
 * docs/guides/tutorial.md cannot rot: every file block on the page equals its file under
 * docs/examples/library/, every file there is shown, the code type-checks, and the tutorial's steps run
 * in a temp project laid out as the page says: the plugin's own test, check, run, a hot reload under
 * `cordage dev`, and a lock that refuses edited files. There node_modules/cordage is a link to this
 * repository, standing in for the tarball the page installs (test/package-init.test.ts installs the
 * tarball itself); the page must name the same tarball as the README.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')
const example = join(root, 'docs/examples/library')
const page = readFileSync(join(root, 'docs/guides/tutorial.md'), 'utf8')

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(join(dir, d.name)) : [join(dir, d.name)]))
}

/** The tutorial's project in a temp folder, with cordage and tsx installed as links. */
function project(): string {
  const dir = join(tempDir('cordage-tutorial-'), 'library')
  cpSync(example, dir, { recursive: true })
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(root, join(dir, 'node_modules/cordage'))
  symlinkSync(join(root, 'node_modules/tsx'), join(dir, 'node_modules/tsx'))
  return dir
}

const cli = (cwd: string, ...args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })

describe('docs/guides/tutorial.md', () => {
  it('shows every file of docs/examples/library exactly as it is', () => {
    const shown = [...page.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)```/g)]
    for (const [, file, text] of shown)
      assert.equal(text, readFileSync(join(root, file), 'utf8'), `${file} differs from the block in docs/guides/tutorial.md`)
    assert.deepEqual(
      shown.map((m) => m[1]).sort(),
      filesUnder(example)
        .map((f) => relative(root, f))
        .sort(),
    )
  })

  it('installs cordage as the README does: the tarball of this version, and tsx', () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    const tarball = `/path/to/cordage-${version}.tgz`
    assert.match(readFileSync(join(root, 'README.md'), 'utf8'), new RegExp(`npm install ${tarball.replace(/\./g, '\\.')}`))
    assert.ok(page.includes(`npm install --save-dev ${tarball} tsx`), `the tutorial installs ${tarball}`)
  })

  it('is linked from the README and from writing-a-plugin.md', () => {
    assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /\(docs\/guides\/tutorial\.md\)/)
    assert.match(readFileSync(join(root, 'docs/guides/writing-a-plugin.md'), 'utf8'), /\(tutorial\.md\)/)
  })

  it('type-checks', () => {
    const dir = tempDir('cordage-tutorial-tsc-')
    const config = join(dir, 'tsconfig.json')
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: {
          baseUrl: root,
          typeRoots: [join(root, 'node_modules/@types')],
          paths: { cordage: ['./core/index.ts'], 'cordage/host': ['./core/host/index.ts'] },
        },
        include: [join(example, '**/*.ts')],
      }),
    )
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config], { encoding: 'utf8' })
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr)
  })

  it("step 7: the plugin's own test passes, the preset checks, and the run completes", () => {
    const dir = project()
    // Run as a user would: not as a child of this test runner (NODE_TEST_CONTEXT would make it report to us).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env
    const test = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=tap', 'plugins/library-desk/test/index.test.ts'],
      { cwd: dir, encoding: 'utf8', env },
    )
    assert.equal(test.status, 0, test.stdout + test.stderr)
    assert.match(test.stdout, /# pass 3/)
    const check = cli(dir, 'check', '--preset', 'library.yml')
    assert.equal(check.status, 0, check.stdout + check.stderr)
    const run = cli(dir, 'run', '--preset', 'library.yml')
    assert.equal(run.status, 0, run.stdout + run.stderr)
    assert.match(run.stdout, /tool\/decision +s2\.a1 +allow rule=renewals/)
    assert.match(run.stdout, /verify\/end +s3 +ok evidence: 2025-07-15/)
  })

  it('step 8: cordage dev reloads the edited plugin and runs the task again on it', async () => {
    const dir = project()
    const child = spawn(
      process.execPath,
      [bin, 'dev', '--preset', 'library.yml', '--task', 'Please renew B-12 for two weeks.', '--json', '--debounce', '20'],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1' } },
    )
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => {
      err += d
    })
    const waitFor = (test: () => boolean, what: string) =>
      new Promise<void>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}\nstdout:\n${out}\nstderr:\n${err}`)), 60_000)
        const check = () => {
          if (test()) {
            clearTimeout(timer)
            child.stdout.off('data', check)
            done()
          }
        }
        child.stdout.on('data', check)
        check()
      })
    child.stdout.on('data', (d) => {
      out += d
    })
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
    try {
      await waitFor(() => lines().some((e) => e.type === 'run/end'), 'the first run')
      const tools = join(dir, 'plugins/library-desk/tools.ts')
      writeFileSync(tools, readFileSync(tools, 'utf8').replace('observation: `Renewed ${bookId}', 'observation: `Extended ${bookId}'))
      await waitFor(() => lines().filter((e) => e.type === 'run/end').length >= 2, 'the run after the reload')
      const reloaded = lines().find((e) => e.type === 'plugin/reloaded')
      assert.equal(reloaded?.name ?? reloaded?.data?.name, 'library-desk', JSON.stringify(reloaded))
      const observations = lines()
        .filter((e) => e.type === 'tool/end' && e.data.tool === 'renew_loan')
        .map((e) => e.data.observation)
      assert.deepEqual(observations, ['Renewed B-12 (Dune): due 2025-07-15', 'Extended B-12 (Dune): due 2025-07-15'])
      assert.deepEqual(
        lines()
          .filter((e) => e.type === 'run/end')
          .map((e) => e.data.status),
        ['COMPLETED', 'COMPLETED'],
      )
    } finally {
      child.kill('SIGINT')
      await new Promise((done) => child.once('exit', done))
    }
  })

  it('step 9: the lock pins the versions and refuses edited files until locked again', () => {
    const dir = project()
    const lock = cli(dir, 'lock', '--preset', 'library.yml')
    assert.equal(lock.status, 0, lock.stderr)
    assert.match(lock.stdout, /library-desk@1\.0\.0 +sha256:[0-9a-f]{32}\n/)
    assert.match(lock.stdout, /wrote library\.lock\.json/)
    assert.equal(cli(dir, 'run', '--preset', 'library.yml').status, 0)
    const tools = join(dir, 'plugins/library-desk/tools.ts')
    writeFileSync(tools, readFileSync(tools, 'utf8') + '\n// edited\n')
    const refused = cli(dir, 'run', '--preset', 'library.yml')
    assert.equal(refused.status, 2)
    assert.match(refused.stderr, /lock_mismatch.*\n.*library-desk@1\.0\.0: its files differ from the lock/)
    assert.equal(cli(dir, 'run', '--preset', 'library.yml', '--no-lock').status, 0)
    assert.equal(cli(dir, 'lock', '--preset', 'library.yml').status, 0)
    assert.equal(cli(dir, 'run', '--preset', 'library.yml').status, 0)
  })
})
