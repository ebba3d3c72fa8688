import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { conflict, type CordageError, footprintOf, mayRunBeside, type Tool } from 'cordage'
import { invokeTool } from '../../../test/tool-harness.ts'
import { tempDir as makeTempDir } from '../../../test/helpers.ts'
import manifest, { type Config } from '../manifest.ts'
import { editFileTool } from '../edit-file.ts'
import { contentHash, writeRecord } from '../edit-journal.ts'
import { listFilesTool, readFileTool } from '../read-files.ts'
import { runTestsTool } from '../run-tests.ts'
import { searchTool } from '../search-files.ts'

/** Folders this file made, removed when it is done. */
const made: string[] = []
function tempDir(): string {
  const dir = makeTempDir('cordage-coding-tools-')
  made.push(dir)
  return dir
}
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

const Cart =
  'export function total(items, discountPercent = 0) {\n  const subtotal = items.reduce((s, i) => s + i.price, 0)\n  return subtotal - subtotal * discountPercent\n}\n'

/** A workspace per run id, like workspace-local's, with a small project in it and a folder beside it. */
function workspaces() {
  const base = tempDir()
  const dirs = new Map<string, string>()
  const dirOf = async (runId: string) => {
    if (!dirs.has(runId)) {
      const dir = join(base, runId)
      mkdirSync(join(dir, 'src'), { recursive: true })
      mkdirSync(join(dir, 'node_modules', 'dep'), { recursive: true })
      writeFileSync(join(dir, 'src', 'cart.js'), Cart)
      writeFileSync(join(dir, 'node_modules', 'dep', 'index.js'), 'discountPercent')
      writeFileSync(join(dir, 'README.md'), 'A cart.\nIt has a discountPercent.\n')
      dirs.set(runId, dir)
    }
    return dirs.get(runId)!
  }
  mkdirSync(join(base, 'outside'))
  writeFileSync(join(base, 'outside', 'secret.txt'), 'secret')
  return { base, dirOf, outside: join(base, 'outside') }
}

const config = (overrides: Partial<Config> = {}): Config => ({ ...(manifest.config({}) as Config), ...overrides })

function call(
  tool: Tool,
  args: unknown,
  { runId = 'run_1', actionId = 's1.a1', signal }: { runId?: string; actionId?: string; signal?: AbortSignal } = {},
) {
  return invokeTool(tool, args, { runId, actionId, signal })
}

async function refused(pending: Promise<unknown>, message: RegExp) {
  await assert.rejects(pending, (error: CordageError) => {
    assert.equal(error.code, 'tool_failed')
    assert.match(error.message, message)
    return true
  })
}

describe('coding-tools: reading', () => {
  it('read_file names the file to cite, and reads a line range', async () => {
    const ws = workspaces()
    const whole = await call(readFileTool(ws.dirOf, config()), { path: 'src/cart.js' })
    assert.equal(whole.observation, `[file: src/cart.js] 4 lines\n${Cart.trimEnd()}`)
    const part = await call(readFileTool(ws.dirOf, config()), { path: './src/cart.js', startLine: 3, endLine: 3 })
    assert.equal(part.observation, '[file: src/cart.js] lines 3-3 of 4\n  return subtotal - subtotal * discountPercent')
    const cut = await call(readFileTool(ws.dirOf, config({ maxReadChars: 10 })), { path: 'src/cart.js' })
    assert.match(cut.observation!, /^\[file: src\/cart\.js\] 4 lines\nexport fun\n… cut at 10 characters/)
    await refused(call(readFileTool(ws.dirOf, config()), { path: 'src' }), /src is not a file/)
  })

  it("list_files lists the project, not node_modules nor the harness's .cordage/, and is bounded", async () => {
    const ws = workspaces()
    const dir = await ws.dirOf('run_1')
    mkdirSync(join(dir, '.cordage', 'edits'), { recursive: true })
    writeFileSync(join(dir, '.cordage', 'edits', 'x.json'), '{}')
    const listed = await call(listFilesTool(ws.dirOf, config()), {})
    assert.deepEqual((listed.output as { files: string[] }).files, ['README.md', 'src/cart.js'])
    const bounded = await call(listFilesTool(ws.dirOf, config({ maxListEntries: 1 })), { path: '.' })
    assert.deepEqual(bounded.output, { files: ['README.md'], truncated: true })
  })

  it('search finds a string or a regular expression, line by line, bounded', async () => {
    const ws = workspaces()
    const found = await call(searchTool(ws.dirOf, config()), { query: 'discountPercent' })
    assert.equal(
      found.observation,
      '3 match(es):\nREADME.md:2: It has a discountPercent.\nsrc/cart.js:1: export function total(items, discountPercent = 0) {\nsrc/cart.js:3: return subtotal - subtotal * discountPercent',
    )
    const regex = await call(searchTool(ws.dirOf, config()), { query: 'subtotal \\* \\w+$', regex: true, path: 'src' })
    assert.deepEqual((regex.output as { matches: unknown[] }).matches, [
      { path: 'src/cart.js', line: 3, text: 'return subtotal - subtotal * discountPercent' },
    ])
    const bounded = await call(searchTool(ws.dirOf, config({ maxSearchMatches: 1 })), { query: 'DISCOUNT', caseSensitive: false })
    assert.equal((bounded.output as { truncated: boolean }).truncated, true)
    await refused(call(searchTool(ws.dirOf, config()), { query: '(', regex: true }), /not a valid regular expression/)
  })

  it("search runs the model's regular expression in time linear in the file, however it is written", { timeout: 20_000 }, async () => {
    const ws = workspaces()
    const dir = await ws.dirOf('run_1')
    writeFileSync(join(dir, 'long.txt'), 'a'.repeat(50_000) + 'b\n' + 'x'.repeat(50_000) + '\n')
    // On a backtracking engine each of these takes longer than the universe has left, and a tool's
    // time limit cannot interrupt a regular expression: it runs on the process's only thread.
    const nested = await call(searchTool(ws.dirOf, config()), { query: '(a+)+$', regex: true })
    assert.deepEqual(nested.output, { matches: [], truncated: false })
    const overlapping = await call(searchTool(ws.dirOf, config()), { query: '(x+x+)+y', regex: true })
    assert.deepEqual(overlapping.output, { matches: [], truncated: false })
    // It still matches, and keeps its case-insensitive option.
    const found = await call(searchTool(ws.dirOf, config()), { query: '^(A+)+B$', regex: true, caseSensitive: false })
    assert.deepEqual(
      (found.output as { matches: { path: string; line: number }[] }).matches.map((m) => [m.path, m.line]),
      [['long.txt', 1]],
    )
    const cased = await call(searchTool(ws.dirOf, config()), { query: '^(A+)+B$', regex: true })
    assert.deepEqual(cased.output, { matches: [], truncated: false })
  })

  it('search refuses a regular expression that needs backtracking, saying why', async () => {
    const ws = workspaces()
    for (const query of ['discount(?=Percent)', '(?<!sub)total', '(\\w+) \\1']) {
      await refused(
        call(searchTool(ws.dirOf, config()), { query, regex: true }),
        /^query \/.*\/ is not a valid regular expression: .*\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process\); write the pattern without them$/,
      )
    }
  })
})

describe('coding-tools: paths stay inside the workspace', () => {
  it('refuses paths that leave the workspace by their letters, through a symbolic link, or into .cordage/', async () => {
    const ws = workspaces()
    const dir = await ws.dirOf('run_1')
    symlinkSync(ws.outside, join(dir, 'linked-folder'))
    symlinkSync(join(ws.outside, 'secret.txt'), join(dir, 'linked-file.txt'))
    symlinkSync(join(ws.outside, 'nothing'), join(dir, 'dangling.txt'))
    const read = readFileTool(ws.dirOf, config())
    const edit = editFileTool(ws.dirOf, config())
    const cases: [string, RegExp][] = [
      ['../outside/secret.txt', /is outside the workspace/],
      ['src/../../outside/secret.txt', /is outside the workspace/],
      [join(ws.outside, 'secret.txt'), /is absolute/],
      ['linked-folder/secret.txt', /leads outside the workspace through a symbolic link/],
      ['linked-file.txt', /leads outside the workspace through a symbolic link/],
      ['linked-folder/new/file.txt', /leads outside the workspace through a symbolic link/],
      ['dangling.txt', /symbolic link to nothing/],
      ['.cordage/edits/x.json', /is in \.cordage\/, which belongs to the harness/],
    ]
    for (const [path, message] of cases) {
      await refused(call(read, { path }), message)
      await refused(call(edit, { path, content: 'pwned' }), message)
    }
    await refused(call(listFilesTool(ws.dirOf, config()), { path: '..' }), /is outside the workspace/)
    await refused(call(searchTool(ws.dirOf, config()), { query: 'secret', path: 'linked-folder' }), /through a symbolic link/)
    assert.deepEqual(readdirSync(ws.outside), ['secret.txt'])
    assert.equal(readFileSync(join(ws.outside, 'secret.txt'), 'utf8'), 'secret')
  })
})

describe('coding-tools: edit_file', () => {
  const fix = { path: 'src/cart.js', find: 'subtotal * discountPercent', replace: 'subtotal * discountPercent / 100' }

  it('holds a pathPrefix constraint (a constrained allow): an edit inside it is done, one outside is refused', async () => {
    const ws = workspaces()
    const edit = editFileTool(ws.dirOf, config())
    assert.deepEqual(edit.enforces, ['pathPrefix'])
    for (const tool of [readFileTool, listFilesTool, searchTool]) assert.deepEqual(tool(ws.dirOf, config()).enforces, ['pathPrefix'])
    const inside = await invokeTool(edit, fix, { constraints: { pathPrefix: 'src/' } })
    assert.equal(inside.observation, 'replaced one snippet in src/cart.js.')
    await refused(
      invokeTool(edit, { path: 'README.md', content: 'gone\n' }, { runId: 'run_2', constraints: { pathPrefix: 'src/' } }),
      /path "README\.md" is outside pathPrefix "src\/": policy allows this call only within src,/,
    )
    assert.equal(readFileSync(join(await ws.dirOf('run_2'), 'README.md'), 'utf8'), 'A cart.\nIt has a discountPercent.\n')
  })

  it('replaces one exact snippet, and a retry of the same action does not apply it twice', async () => {
    const ws = workspaces()
    const edit = editFileTool(ws.dirOf, config())
    const first = await call(edit, fix)
    assert.equal(first.observation, 'replaced one snippet in src/cart.js.')
    const file = join(await ws.dirOf('run_1'), 'src', 'cart.js')
    const fixed = Cart.replace('subtotal * discountPercent', 'subtotal * discountPercent / 100')
    assert.equal(readFileSync(file, 'utf8'), fixed)
    // The replacement contains the snippet: only the journal keeps a retry from dividing twice.
    const retry = await call(edit, fix)
    assert.equal(retry.observation, 'Already done: replaced one snippet in src/cart.js.')
    assert.equal(readFileSync(file, 'utf8'), fixed)
    assert.deepEqual([first.receipt, (retry.output as { alreadyApplied: boolean }).alreadyApplied], [retry.receipt, true])
  })

  it('tells the model what to do when the snippet is missing or ambiguous, and writes whole files', async () => {
    const ws = workspaces()
    const edit = editFileTool(ws.dirOf, config())
    await refused(
      call(edit, { path: 'src/cart.js', find: 'no such text', replace: 'nor this' }),
      /not in src\/cart\.js; read the file and copy the snippet exactly/,
    )
    await refused(call(edit, { path: 'src/cart.js', find: 'subtotal', replace: 'sum' }), /occurs more than once/)
    await refused(call(edit, { path: 'src/new.js', find: 'a', replace: 'b' }), /does not exist; write it with content/)
    await call(edit, fix, { actionId: 's1.a1' })
    await refused(
      call(edit, { path: 'src/cart.js', find: 'subtotal * percent', replace: fix.replace }, { actionId: 's2.a1' }),
      /already contains the replacement, so the change may be done already/,
    )
    const wrote = await call(edit, { path: 'lib/deep/util.js', content: 'export const x = 1\n' }, { actionId: 's4.a1' })
    assert.equal(wrote.observation, 'wrote lib/deep/util.js.')
    assert.equal(readFileSync(join(await ws.dirOf('run_1'), 'lib', 'deep', 'util.js'), 'utf8'), 'export const x = 1\n')
    assert.equal(edit.input.safeParse({ path: 'a', find: 'x', content: 'y' }).success, false, 'one form at a time')
    assert.equal(edit.input.safeParse({ path: 'a', find: 'x' }).success, false, 'find needs replace')
  })

  it('reconcile: committed when the file has the new content, not committed when untouched, unknown when changed otherwise', async () => {
    const ws = workspaces()
    const edit = editFileTool(ws.dirOf, config())
    const signal = new AbortController().signal
    await call(edit, fix, { runId: 'run_a' })
    assert.deepEqual(await edit.reconcile!('run_a/s1.a1', signal), {
      committed: true,
      receipt: `src/cart.js@${contentHash(Cart.replace('subtotal * discountPercent', 'subtotal * discountPercent / 100')).slice(7, 19)}`,
      output: { path: 'src/cart.js', sha256: contentHash(Cart.replace('subtotal * discountPercent', 'subtotal * discountPercent / 100')) },
    })
    assert.deepEqual(await edit.reconcile!('run_a/s9.a9', signal), { committed: false }, 'no intent on record')
    // An intent recorded by a call that stopped before writing.
    const dir = await ws.dirOf('run_b')
    await writeRecord(dir, { key: 'run_b/s1.a1', path: 'src/cart.js', before: contentHash(Cart), after: contentHash('fixed') })
    assert.deepEqual(await edit.reconcile!('run_b/s1.a1', signal), { committed: false })
    writeFileSync(join(dir, 'src', 'cart.js'), 'something else')
    assert.equal(await edit.reconcile!('run_b/s1.a1', signal), undefined)
    assert.equal(await edit.reconcile!('edit_file:some-other-key', signal), undefined)
  })

  it('declares its contract: a local side effect, idempotent under its key, that wants approval', () => {
    const ws = workspaces()
    const tools = [readFileTool, listFilesTool, searchTool, editFileTool, runTestsTool].map((t) => t(ws.dirOf, config()))
    assert.deepEqual(
      tools.map((t) => [t.name, t.sideEffect, t.needsApproval]),
      [
        ['read_file', 'none', false],
        ['list_files', 'none', false],
        ['search', 'none', false],
        ['edit_file', 'local', true],
        ['run_tests', 'local', false],
      ],
    )
    assert.equal(
      tools[3].idempotencyKey,
      undefined,
      'the default key <runId>/<actionId>: a content key would be shared by runs with different workspaces',
    )
  })

  it('names what each call touches, so reads of other files run beside an edit and anything on its file does not', () => {
    const ws = workspaces()
    const [read, list, search, edit, test] = [readFileTool, listFilesTool, searchTool, editFileTool, runTestsTool].map((t) =>
      t(ws.dirOf, config()),
    )
    const touched = (t: Tool, args: unknown) =>
      footprintOf(t, t.input.safeParse(args).success ? (t.input.safeParse(args) as { data: unknown }).data : args)
    const editCart = touched(edit, { path: './src/cart.js', content: 'x' })
    assert.deepEqual(editCart, { reads: [], writes: ['src/cart.js'] })
    assert.equal(conflict(editCart, touched(read, { path: 'README.md' })), false)
    assert.equal(conflict(editCart, touched(read, { path: 'src/cart.js' })), true)
    assert.equal(conflict(editCart, touched(search, { query: 'x', path: 'src' })), true, 'a search of the folder reads the file')
    assert.equal(conflict(editCart, touched(list, {})), true, 'the whole workspace')
    assert.equal(conflict(editCart, touched(edit, { path: 'src/other.js', content: 'y' })), false)
    assert.equal(mayRunBeside(test), false, 'run_tests reads and writes anything: it runs alone')
  })
})

describe('coding-tools: run_tests', () => {
  const test = (run: string[] | string, timeoutMs = 10_000) =>
    config({ test: { run, shell: typeof run === 'string', timeoutMs, env: {}, inheritEnv: false } })

  it('reports passing and failing tests as results, with the end of the output', async () => {
    const ws = workspaces()
    const pass = await call(runTestsTool(ws.dirOf, test(['node', '-e', 'console.log("# pass 3")'])), {})
    assert.match(pass.observation!, /^tests passed: `node -e .*` exited 0 in \d+ ms\n# pass 3$/)
    const fail = await call(runTestsTool(ws.dirOf, test('echo "# fail 1"; exit 1')), {})
    assert.match(fail.observation!, /^tests failed: `echo "# fail 1"; exit 1` exited 1 in \d+ ms\n# fail 1$/)
    assert.equal((fail.output as { exitCode: number }).exitCode, 1)
  })

  it('stops tests that run past their limit, killing their process group, and says so', async () => {
    const ws = workspaces()
    const t0 = Date.now()
    const slow = await call(runTestsTool(ws.dirOf, test('sleep 30 & echo $! > pid; wait', 200)), {})
    assert.ok(Date.now() - t0 < 5000)
    assert.match(slow.observation!, /^tests timed out: .* was stopped after 200 ms/)
    const pid = Number(readFileSync(join(await ws.dirOf('run_1'), 'pid'), 'utf8'))
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    assert.equal(alive(pid), false)
  })

  it('refuses, at start, a test command given as a string without shell: true', async () => {
    const { Cordage } = await import('../../../core/host/app.ts')
    const { stringify } = await import('yaml')
    const dir = tempDir()
    writeFileSync(
      join(dir, 'p.yml'),
      stringify({
        cordage: 1,
        agents: {
          a: {
            model: { plugin: 'model-scripted', config: { script: [{ final: 'x' }] } },
            plugins: [
              'store-memory',
              'tools-registry',
              'context-basic',
              'verifier-basic',
              { plugin: 'policy-rules', config: {} },
              'workspace-local',
              { plugin: 'coding-tools', config: { test: { run: 'npm test' } } },
            ],
          },
        },
      }),
    )
    await assert.rejects(Cordage.fromPreset(join(dir, 'p.yml')), (error: CordageError) => {
      assert.equal(error.code, 'plugin_config_invalid')
      assert.match(error.message, /test\.run is a shell script \(a string\) only with test\.shell: true/)
      return true
    })
    assert.equal(existsSync(join(dir, '.cordage')), false)
  })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

describe('coding-tools: edit_file preview', () => {
  it('shows the diff of the change without writing anything, and fails like the edit would', async () => {
    const ws = workspaces()
    const edit = editFileTool(ws.dirOf, config())
    const io = { runId: 'run_1', actionId: 's1.a1', signal: new AbortController().signal }
    const preview = await edit.preview!(
      { path: 'src/cart.js', find: 'subtotal * discountPercent', replace: 'subtotal * discountPercent / 100' },
      io,
    )
    assert.equal(preview.summary, 'change src/cart.js: +1 -1 lines')
    assert.match(preview.diff!, /^--- a\/src\/cart\.js\n\+\+\+ b\/src\/cart\.js\n@@ -1,4 \+1,4 @@\n/)
    assert.match(preview.diff!, /^- {2}return subtotal - subtotal \* discountPercent$/m)
    assert.match(preview.diff!, /^\+ {2}return subtotal - subtotal \* discountPercent \/ 100$/m)
    assert.equal(readFileSync(join(await ws.dirOf('run_1'), 'src', 'cart.js'), 'utf8'), Cart, 'nothing written')
    assert.equal(existsSync(join(await ws.dirOf('run_1'), '.cordage')), false, 'no journal entry either')
    const created = await edit.preview!({ path: 'lib/new.js', content: 'a\nb\n' }, io)
    assert.deepEqual(created, {
      summary: 'create lib/new.js (2 lines)',
      diff: '--- /dev/null\n+++ b/lib/new.js\n@@ -0,0 +1,2 @@\n+a\n+b\n',
    })
    assert.equal(existsSync(join(await ws.dirOf('run_1'), 'lib')), false)
    await assert.rejects(Promise.resolve(edit.preview!({ path: 'src/cart.js', find: 'nope', replace: 'x' }, io)), /not in src\/cart\.js/)
    await assert.rejects(Promise.resolve(edit.preview!({ path: '../outside/secret.txt', content: 'x' }, io)), /outside|workspace/)
  })
})
