/**
 * A constrained allow's `pathPrefix` (issue 29, item 1) holds on the file that is actually touched:
 * the path is resolved against the workspace, every symbolic link of it is followed, and the result
 * must lie in the prefix folder segment by segment. Before, the prefix was compared as text, so
 * `pathPrefix: src` let edit_file write `src-evil/pwn.js` and `srcfoo.txt`, and `pathPrefix: src/`
 * let it overwrite `config/prod.yml` through a link `src/shared -> ../config`.
 *
 * Driven through a real run: a preset whose policy allows edit_file (and the reading tools) only
 * under a prefix, a scripted model proposing the writes, the workspace a copy of a template holding
 * real symbolic links. Each attack must be refused with `tool_failed` and a message naming the
 * prefix, and the file system must show that nothing was written outside.
 */
import assert from 'node:assert/strict'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { Cordage } from '../../core/host/app.ts'
import type { ScriptEntry } from '../../plugins/model-scripted/manifest.ts'
import { tempDir } from '../temp.ts'

const Secret = 'database: prod\n'
const Pwned = 'pwned\n'
/** `café` composed (NFC, one code point for é) and decomposed (NFD, e + combining acute). */
const CafeNFC = 'caf\u00e9'
const CafeNFD = 'cafe\u0301'

let app: Cordage | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
})

interface Lab {
  /** The run's workspace. */
  workspace: string
  /** A folder outside the workspace that an absolute link points at. */
  outside: string
  events: RunEvent[]
}

/**
 * A template with the links an attacker would plant, a preset allowing `tools` only under `prefix`,
 * and one run of the scripted model proposing `calls`, one per step.
 */
async function run(prefix: string, calls: ScriptEntry[], tools = ['edit_file']): Promise<Lab> {
  const dir = tempDir('cordage-path-constraints-')
  const outside = join(dir, 'outside')
  mkdirSync(outside)
  writeFileSync(join(outside, 'target.txt'), Secret)
  const template = join(dir, 'template')
  for (const folder of ['src/lib', 'config', CafeNFC]) mkdirSync(join(template, folder), { recursive: true })
  writeFileSync(join(template, 'src/app.js'), 'export const answer = 41\n')
  writeFileSync(join(template, 'config/prod.yml'), Secret)
  writeFileSync(join(template, CafeNFC, 'menu.txt'), 'tea\n')
  // Links as they are copied into the workspace (verbatim): relative ones stay inside it, so they
  // lead to the workspace's own config/; the absolute one leads out of the workspace altogether.
  symlinkSync('../config', join(template, 'src/shared'))
  symlinkSync('../config/new.yml', join(template, 'src/planted'))
  symlinkSync(outside, join(template, 'src/abs'))
  symlinkSync('lib', join(template, 'src/alias'))
  const preset = {
    cordage: 1,
    agents: {
      coder: {
        task: 'Change the files.',
        budgets: { maxSteps: calls.length + 2 },
        model: { plugin: 'model-scripted', config: { script: [...calls, { final: 'Done.' }] } },
        plugins: [
          'store-memory',
          'tools-registry',
          'context-basic',
          { plugin: 'verifier-basic', config: { minCount: 0 } },
          { plugin: 'workspace-local', config: { root: join(dir, 'workspaces'), template, keep: 'always' } },
          'coding-tools',
          {
            plugin: 'policy-rules',
            config: {
              default: 'deny',
              rules: tools.map((tool) => ({
                id: `${tool.replace(/_/g, '-')}-under-prefix`,
                verdict: 'allow',
                match: { tool },
                constraints: { pathPrefix: prefix },
              })),
            },
          },
        ],
      },
    },
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  app = await Cordage.fromPreset(file)
  const agent = app.agent('coder')
  const state = await agent.run()
  assert.equal(state.status, 'COMPLETED', state.reason)
  return { workspace: join(dir, 'workspaces', state.runId), outside, events: await agent.store().load(state.runId) }
}

const write = (path: string, content = Pwned): ScriptEntry => ({ tool: 'edit_file', args: { path, content } })

/** The outcome of each action in order: `end` or the error code and message, with the decision's constraints. */
function outcomes(events: RunEvent[]) {
  const out = new Map<string, { path: string; decision?: unknown; outcome?: string; message?: string }>()
  for (const e of events) {
    if (!e.actionId) continue
    if (e.type === 'tool/proposed') out.set(e.actionId, { path: (e.data.args as { path: string }).path })
    if (e.type === 'tool/decision') out.get(e.actionId)!.decision = e.data.constraints
    if (e.type === 'tool/end') out.get(e.actionId)!.outcome = 'end'
    if (e.type === 'tool/error') Object.assign(out.get(e.actionId)!, { outcome: e.data.code, message: e.data.message })
  }
  return [...out.values()]
}

/** Why each attack is refused: most are outside the prefix; some are refused for the workspace as a whole. */
function why(path: string): RegExp {
  if (path.startsWith('src/abs/')) return /leads outside the workspace through a symbolic link/
  if (path === 'src/planted') return /is a symbolic link to nothing/
  return /is outside pathPrefix/
}

function assertRefused(lab: Lab, path: string, prefix: string) {
  const action = outcomes(lab.events).find((a) => a.path === path)
  assert.ok(action, `the model proposed ${path}`)
  assert.deepEqual(action.decision, { pathPrefix: prefix }, 'the decision carries the constraint')
  assert.equal(action.outcome, 'tool_failed', `${path} must be refused, got ${action.outcome}: ${action.message}`)
  assert.match(action.message!, why(path), `${path}: the message says why`)
  if (why(path).source.includes('pathPrefix')) assert.ok(action.message!.includes(JSON.stringify(prefix)), action.message)
}

function assertDone(lab: Lab, path: string) {
  const action = outcomes(lab.events).find((a) => a.path === path)
  assert.equal(action?.outcome, 'end', `${path} is inside the prefix and must be done: ${action?.message}`)
}

/** Every path under `dir`, links included (not followed), with `/`. */
function tree(dir: string, at = ''): string[] {
  return readdirSync(join(dir, at), { withFileTypes: true }).flatMap((entry) => {
    const rel = at ? `${at}/${entry.name}` : entry.name
    return entry.isDirectory() && !entry.isSymbolicLink() ? [rel, ...tree(dir, rel)] : [rel]
  })
}

/** The files of the workspace that the template did not have, the harness's `.cordage/` aside. */
function added(lab: Lab): string[] {
  const template = new Set(tree(join(lab.workspace, '..', '..', 'template')))
  return tree(lab.workspace).filter((p) => !template.has(p) && p !== '.cordage' && !p.startsWith('.cordage/'))
}

const Attacks = [
  'src-evil/pwn.js',
  'srcfoo.txt',
  'src/shared/prod.yml',
  'src/shared/new.yml',
  'src/../config/prod.yml',
  'src/lib/../../config/prod.yml',
  'src/planted',
  'src/abs/target.txt',
  'src/abs/new.txt',
  'SRC/app.js',
  'Src/x.js',
]

describe('pathPrefix on edit_file, through a real run', () => {
  for (const prefix of ['src', 'src/', './src']) {
    it(`pathPrefix ${JSON.stringify(prefix)}: a sibling folder, a longer name, links in and out, .. and another case are refused; nothing lands outside`, async () => {
      const lab = await run(prefix, [
        ...Attacks.map((path) => write(path)),
        write('src/app.js', 'export const answer = 42\n'),
        write('src/new/deep/file.js'),
        write('src/alias/ok.js'),
        write('src/lib/./inner.js'),
      ])
      for (const path of Attacks) assertRefused(lab, path, prefix)
      for (const path of ['src/app.js', 'src/new/deep/file.js', 'src/alias/ok.js', 'src/lib/./inner.js']) assertDone(lab, path)
      // The file system: the secrets as they were, nothing created outside src/.
      assert.equal(readFileSync(join(lab.workspace, 'config/prod.yml'), 'utf8'), Secret)
      assert.equal(readFileSync(join(lab.outside, 'target.txt'), 'utf8'), Secret)
      assert.deepEqual(readdirSync(lab.outside), ['target.txt'])
      assert.deepEqual(readdirSync(join(lab.workspace, 'config')), ['prod.yml'])
      assert.deepEqual(added(lab).sort(), ['src/lib/inner.js', 'src/lib/ok.js', 'src/new', 'src/new/deep', 'src/new/deep/file.js'])
      assert.equal(readFileSync(join(lab.workspace, 'src/app.js'), 'utf8'), 'export const answer = 42\n')
      assert.ok(lstatSync(join(lab.workspace, 'src/shared')).isSymbolicLink(), 'the planted link is still a link')
    })
  }

  it('Unicode forms are compared as they are: the decomposed spelling of an NFC prefix is another folder, refused', async () => {
    const lab = await run(`${CafeNFC}/`, [write(`${CafeNFD}/menu.txt`), write(`${CafeNFC}/menu.txt`, 'coffee\n')])
    assertRefused(lab, `${CafeNFD}/menu.txt`, `${CafeNFC}/`)
    assertDone(lab, `${CafeNFC}/menu.txt`)
    assert.equal(readFileSync(join(lab.workspace, CafeNFC, 'menu.txt'), 'utf8'), 'coffee\n')
    assert.deepEqual(added(lab), [])
  })

  it('a prefix naming one file allows that file, not a file whose name starts with it', async () => {
    const lab = await run('src/app.js', [write('src/app.js.bak'), write('src/app.js', 'export const answer = 43\n')])
    assertRefused(lab, 'src/app.js.bak', 'src/app.js')
    assertDone(lab, 'src/app.js')
    assert.equal(existsSync(join(lab.workspace, 'src/app.js.bak')), false)
  })
})

describe('pathPrefix on the reading tools, through a real run', () => {
  it('read_file, list_files and search hold it too: nothing outside the prefix is read, through a link or a sibling', async () => {
    const lab = await run(
      'src/',
      [
        { tool: 'read_file', args: { path: 'src/shared/prod.yml' } },
        { tool: 'read_file', args: { path: 'src/abs/target.txt' } },
        { tool: 'read_file', args: { path: 'config/prod.yml' } },
        { tool: 'list_files', args: { path: 'src/shared' } },
        { tool: 'list_files', args: { path: '.' } },
        { tool: 'search', args: { query: 'database', path: 'src/shared' } },
        { tool: 'search', args: { query: 'database', path: '.' } },
        { tool: 'read_file', args: { path: 'src/app.js' } },
        { tool: 'list_files', args: { path: 'src' } },
        { tool: 'search', args: { query: 'answer', path: 'src/' } },
      ],
      ['read_file', 'list_files', 'search'],
    )
    const all = outcomes(lab.events)
    for (const action of all.slice(0, 7)) {
      assert.equal(action.outcome, 'tool_failed', `${action.path} must be refused, got ${action.outcome}: ${action.message}`)
      assert.match(action.message!, why(action.path))
    }
    for (const action of all.slice(7)) assert.equal(action.outcome, 'end', `${action.path}: ${action.message}`)
    const seen = lab.events.filter((e) => e.type === 'tool/end' || e.type === 'tool/error').map((e) => JSON.stringify(e.data))
    assert.ok(!seen.some((text) => text.includes('database')), 'no secret reached the record')
  })
})
