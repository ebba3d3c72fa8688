/**
 * Where a command writes a file it was asked for (`cordage artifact --out`, `cordage eval --out` and
 * `--report`) is checked before any work: a folder, an empty path, a path under a file, or one the
 * command would write twice is a usage error (`error [invalid_input]: --flag ...`, exit 2), never a
 * stack trace, and for eval never after the whole suite has run. A missing folder is made. Through the
 * real binary, in child processes.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { bigReport } from './fixtures/plugins/artifact-desk/index.ts'
import { cordage } from './cordage-process.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')

/** A usage error naming the flag: exit 2, one `error [invalid_input]:` line, no stack. */
function refused(r: { code: number | null; out: string; err: string }, flag: string, message: RegExp): void {
  assert.equal(r.code, 2, r.err)
  assert.match(r.err, new RegExp(`^error \\[invalid_input\\]: ${flag}`), r.err)
  assert.match(r.err, message)
  assert.doesNotMatch(r.err, /internal error|\n\s+at /, 'no stack trace')
}

/** The places an output path cannot be: each with what the message must say. */
function badPaths(work: string): [string, RegExp][] {
  mkdirSync(join(work, 'a-folder'), { recursive: true })
  writeFileSync(join(work, 'a-file.txt'), 'not a folder\n')
  return [
    ['a-folder', /a-folder is a folder/],
    ['', /an empty path/],
    ['a-file.txt/out.html', /a-file\.txt is a file, not a folder/],
    ['new-folder/', /ends with a "\/"/],
  ]
}

describe('cordage artifact --out', () => {
  const dir = tempDir('cordage-out-')
  const preset = join(dir, 'preset.yml')
  const ref = `artifact:sha256:${createHash('sha256').update(bigReport()).digest('hex')}`

  before(async () => {
    writeFileSync(
      preset,
      stringify({
        cordage: 1,
        agents: {
          reports: {
            task: 'Fetch the quarterly report.',
            model: { plugin: 'model-scripted', config: { script: [{ tool: 'big_report' }, { final: 'Fetched.' }] } },
            plugins: [
              { plugin: 'store-sqlite', config: { path: 'runs.db' } },
              'tools-registry',
              'context-basic',
              { plugin: 'verifier-basic', config: { minCount: 0 } },
              { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'allow' } },
              'artifacts',
              { path: join(root, 'test/fixtures/plugins/artifact-desk') },
            ],
          },
        },
      }),
    )
    const run = await cordage(['run', '--preset', preset, '--json'], dir)
    assert.equal(run.code, 0, run.err)
  })

  it('refuses a path that cannot be a file before it reads anything: exit 2 naming --out', async () => {
    for (const [out, message] of badPaths(dir)) {
      refused(await cordage(['artifact', ref, '--out', out, '--preset', preset], dir), '--out', message)
      // Before the store is opened or the reference read: a reference that does not exist changes nothing.
      refused(await cordage(['artifact', 'artifact:sha256:nope', '--out', out, '--preset', preset], dir), '--out', message)
    }
    assert.equal(readFileSync(join(dir, 'a-file.txt'), 'utf8'), 'not a folder\n', 'the file in the way is untouched')
  })

  it('makes the folders a path needs, and writes the bytes there', async () => {
    const r = await cordage(['artifact', ref, '--out', 'reports/q3/report.txt', '--preset', preset], dir)
    assert.equal(r.code, 0, r.err)
    assert.equal(readFileSync(join(dir, 'reports/q3/report.txt'), 'utf8'), bigReport())
  })
})

describe('cordage eval --out and --report', () => {
  const suite = join(root, 'evals/lab/max-steps.yml')

  it('refuses a path that cannot be a file before any case runs: exit 2 naming the flag', async () => {
    const work = tempDir('cordage-out-')
    for (const flag of ['--out', '--report']) {
      for (const [out, message] of badPaths(work)) {
        const r = await cordage(['eval', suite, flag, out], work)
        refused(r, flag, message)
        assert.doesNotMatch(r.err, /case\(s\) ×/, 'no case started')
        assert.equal(r.out, '', 'no case line, no summary')
      }
    }
  })

  it('refuses --out and --report naming one file, and a report whose copy for the playground cannot be written', async () => {
    const work = tempDir('cordage-out-')
    refused(await cordage(['eval', suite, '--out', 'result', '--report', './result'], work), '--report', /the same file as --out/)
    // The copy goes to .cordage/eval/latest.html of the working directory: a file .cordage is in the way.
    writeFileSync(join(work, '.cordage'), 'a file\n')
    refused(await cordage(['eval', suite, '--report', 'report.html'], work), '--report', /\.cordage is a file, not a folder/)
    assert.ok(!existsSync(join(work, 'report.html')), 'nothing written')
  })

  it('writes both where asked, making the folders they need', async () => {
    const work = tempDir('cordage-out-')
    const r = await cordage(['eval', suite, '--out', 'out/result.json', '--report', 'out/html/report.html'], work)
    assert.equal(r.code, 0, r.err)
    assert.equal(JSON.parse(readFileSync(join(work, 'out/result.json'), 'utf8')).runs.length, 1)
    assert.match(readFileSync(join(work, 'out/html/report.html'), 'utf8'), /max-steps/)
    assert.ok(existsSync(join(work, '.cordage/eval/latest.html')))
  })
})
