/**
 * Hot reload in the playground (`cordage playground --watch`): the playground runs the same reloader as
 * `cordage dev` (core/host/dev.ts) on the plugin folders of its preset, and each `plugin/reloaded`
 * reaches the page live through the plugin event stream.
 *
 * In headless Chromium (Debian's, driven by playwright-core), on a temp preset whose followup agent runs
 * a project-local policy folder (a copy of test/fixtures/plugins/reload-policy): a run started in the
 * page waits for approval under rules v1; the policy file is edited on disk (1.0.0 → 1.1.0, rules v2)
 * and the page shows the reload with old → new version and hash; an edit that does not build shows a
 * failed reload, and 1.1.0 keeps serving; approving in the page continues the run, whose decisions from
 * then on come from reload-policy@1.1.0 (rules v2). The CLI part starts `cordage playground --watch`
 * as a process and sees a reload printed; it also checks the address it prints carries the token
 * (`--token`, $CORDAGE_PLAYGROUND_TOKEN), that a swap through the API is printed with who asked, and
 * that `--read-only` refuses changes. Screenshot: tmp/playground-screenshots/5-reload.png.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../playground/server.ts'
import { saves, type SaveStyle } from './editor-saves.ts'
import { browserSkip, defaultPresetCopy, openPage, reloadPresetCopy, shots } from './playground-helpers.ts'
import { cordageBin as bin } from './bin.ts'

/** The fixture's manifest.ts with another version and rules label: one file, so one save changes both. */
function edited(plugin: string, version: string, rules: string, save: SaveStyle = 'inPlace'): void {
  const file = join(plugin, 'manifest.ts')
  saves[save](
    file,
    readFileSync(file, 'utf8')
      .replace(/version: '[^']+'/, `version: '${version}'`)
      .replace(/Rules = '[^']+'/, `Rules = '${rules}'`),
  )
}

describe('playground --watch in headless Chromium: a plugin reload, live', { skip: browserSkip }, () => {
  let copy: ReturnType<typeof reloadPresetCopy>
  let playground: Playground
  let browser: Browser
  let page: Page
  const errors: unknown[] = []
  let pageErrors: string[] = []

  before(async () => {
    copy = reloadPresetCopy()
    playground = await startPlayground({ preset: copy.preset, port: 0, watch: { debounceMs: 20 }, onError: (e) => errors.push(e) })
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
    if (copy) rmSync(copy.dir, { recursive: true, force: true })
    assert.deepEqual(errors, [])
  })

  const reloads = (ok: boolean) => `[data-testid=plugin-events] tr[data-type="plugin/reloaded"][data-ok="${ok}"]`
  const statusIs = (value: string) => page.waitForSelector(`[data-testid=run-status]:text-is("${value}")`)
  let runId: string

  it('shows that hot reload is on, and the policy folder with its version and bundle hash', async () => {
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready=true]')
    assert.match(
      (await page.textContent('[data-testid=watch]')) ?? '',
      new RegExp(`hot reload on: watching ${copy.folders} plugin folder\\(s\\)`),
    )
    assert.equal(await page.textContent('[data-testid=version-followup-reload-policy]'), '1.0.0')
    assert.equal(
      await page.textContent('[data-testid=hash-followup-reload-policy]'),
      playground.reloader!.hashOf('followup', copy.plugin)!.slice(0, 15),
    )
    assert.match((await page.textContent('[data-testid=plugins-followup] tr[data-plugin=reload-policy]')) ?? '', /folder/)
    // Labelled: not the content hash a lock and a run show for the same plugin (docs/reference/hashes.md).
    const header = page.locator('[data-testid=plugins-followup] thead th', { hasText: 'bundle hash' })
    assert.match((await header.getAttribute('title')) ?? '', /not the content hash a lock file and a run record/i)
  })

  it('starts a run that waits for approval under rules v1', async () => {
    await page.selectOption('[data-testid=start-agent]', 'followup')
    await page.click('[data-testid=start-button]')
    await statusIs('WAITING_APPROVAL')
    await page.waitForSelector('[data-testid=pending]:not([hidden])')
    runId = (await page.textContent('[data-testid=run-id]'))!
    assert.match((await page.textContent('#pending-why')) ?? '', /\(rules v1\) \(rule v1\/needs-approval\)/)
    assert.match(
      (await page.textContent('[data-testid=events] tr[data-type="tool/decision"]')) ?? '',
      /reload-policy@1\.0\.0.*ask rule=v1\/needs-approval policy=reload-policy@1\.0\.0\+v1/,
    )
  })

  it('an edit on disk arrives in the page as plugin/reloaded ok, with old → new version and hash, and the card follows', async () => {
    const before = playground.reloader!.hashOf('followup', copy.plugin)!
    edited(copy.plugin, '1.1.0', 'v2')
    const row = await page.waitForSelector(reloads(true), { timeout: 15_000 })
    const after = playground.reloader!.hashOf('followup', copy.plugin)!
    assert.notEqual(after, before)
    const text = (await row.textContent()) ?? ''
    assert.match(text, /followup/)
    assert.match(text, /reload-policy@1\.1\.0/)
    assert.ok(text.includes(`reloaded 1.0.0 (bundle ${before.slice(0, 15)}) → 1.1.0 (bundle ${after.slice(0, 15)}) in `), text)
    await page.waitForSelector('[data-testid=version-followup-reload-policy]:text-is("1.1.0")')
    assert.equal(await page.textContent('[data-testid=hash-followup-reload-policy]'), after.slice(0, 15))
  })

  it('an edit that does not build shows a failed reload in the page, and 1.1.0 keeps serving', async () => {
    const serving = playground.reloader!.hashOf('followup', copy.plugin)!
    writeFileSync(join(copy.plugin, 'manifest.ts'), "export const Rules = 'v3\n")
    const row = await page.waitForSelector(reloads(false), { timeout: 15_000 })
    const text = (await row.textContent()) ?? ''
    assert.match(text, /FAILED \[plugin_start_failed\] 1\.1\.0 \(bundle .*\) → \(no build\)/)
    assert.match(text, /manifest\.ts:1:\d+: Unterminated string literal/)
    assert.ok(text.includes(`reload-policy@1.1.0 (bundle ${serving.slice(0, 15)}) keeps serving`), text)
    assert.equal(await row.getAttribute('data-fail-closed'), null)
    assert.equal(playground.reloader!.hashOf('followup', copy.plugin), serving)
    assert.equal(playground.app.pluginsOf('followup')['reload-policy'], '1.1.0')
    assert.equal(await page.textContent('[data-testid=version-followup-reload-policy]'), '1.1.0')
  })

  it('approved in the page, the run goes on under the new version: the approval is decided again by rules v2, then the next step too', async () => {
    await page.fill('[data-testid=decide-by]', 'alice')
    await page.click('[data-testid=approve]')
    // The approval was given under policy reload-policy@1.0.0+v1; the policy serving now decides the call again.
    await page.waitForSelector('#pending-why:has-text("rules v2")', { timeout: 15_000 })
    await page.waitForSelector('[data-testid=pending]:not([hidden])')
    await page.click('[data-testid=approve]')
    await page.waitForSelector('[data-testid=events] tr[data-type="run/end"]', { timeout: 15_000 })
    await statusIs('COMPLETED')
    const producers = await page.$$eval('[data-testid=events] tr[data-type="tool/decision"]', (rows) =>
      rows.map((r) => r.children[3].textContent),
    )
    assert.deepEqual(producers, ['reload-policy@1.0.0', 'reload-policy@1.1.0', 'reload-policy@1.1.0'])
    assert.match(
      (await page.textContent('[data-testid=events] tr[data-type="run/version-drift"]')) ?? '',
      /accepted by \S+: reload-policy 1\.0\.0 → 1\.1\.0/,
    )

    // The same in the store: step 1 was decided by v1, then (after the reload) by v2; step 2 by v2.
    const events = await playground.app.agent('followup').store().load(runId)
    const decisions = events.flatMap((e: RunEvent) =>
      e.type === 'tool/decision' ? [[e.actionId, e.producer, e.data.verdict, e.data.ruleId, e.data.policyVersion]] : [],
    )
    assert.deepEqual(decisions, [
      ['s1.a1', 'reload-policy@1.0.0', 'ask', 'v1/needs-approval', 'reload-policy@1.0.0+v1'],
      ['s1.a1', 'reload-policy@1.1.0', 'ask', 'v2/needs-approval', 'reload-policy@1.1.0+v2'],
      ['s2.a1', 'reload-policy@1.1.0', 'allow', 'v2/read-only', 'reload-policy@1.1.0+v2'],
    ])
    const end = events.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED')

    // Both reloads, newest first, came through the live stream: the page was never reloaded.
    const rows = await page.$$eval('[data-testid=plugin-events] tr[data-type="plugin/reloaded"]', (r) =>
      r.map((row) => row.getAttribute('data-ok')),
    )
    assert.deepEqual(rows, ['false', 'true'])
    await page.screenshot({ path: join(shots, '5-reload.png'), fullPage: true })
    assert.deepEqual(pageErrors, [])
  })
})

describe('cordage playground (the CLI): --watch, the token, --read-only', () => {
  it('prints the watched folders and each reload, and stops on SIGINT', async () => {
    const copy = reloadPresetCopy()
    const child = spawn(process.execPath, [bin, 'playground', '--preset', copy.preset, '--port', '0', '--watch', '--debounce', '20'], {
      cwd: copy.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = '',
      err = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    const until = async (what: () => boolean, label: string) => {
      const end = Date.now() + 30_000
      while (!what()) {
        if (child.exitCode !== null || Date.now() > end) assert.fail(`${label}; exit ${child.exitCode}\nstdout: ${out}\nstderr: ${err}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    try {
      await until(
        () => err.includes(`watching ${copy.folders} plugin folder(s)`) && /reload-policy {2}followup:reload-policy/.test(err),
        'the watched folders are listed',
      )
      // The address printed carries the token; the API answers only with it.
      const [, url, token] = /on (http:\/\/127\.0\.0\.1:\d+\/)\?token=([\w-]+) /.exec(err) ?? []
      assert.ok(url && token, err)
      const headers = { authorization: `Bearer ${token}` }
      assert.equal((await fetch(`${url}api/agents`)).status, 401)
      const agents = (await (await fetch(`${url}api/agents`, { headers })).json()) as { watch: { folders: { dir: string }[] } | null }
      assert.equal(agents.watch?.folders.length, copy.folders)
      edited(join(copy.dir, 'reload-policy'), '1.0.1', 'v2')
      await until(
        () => /reloaded reload-policy in followup: 1\.0\.0 → 1\.0\.1 {2}bundle sha256:\w+ → sha256:\w+ {2}\d+ms/.test(out),
        'the reload is printed',
      )
      const feed = (await (await fetch(`${url}api/plugin-events`, { headers })).json()) as {
        events: { type: string; data: { ok?: boolean; to?: { version: string } } }[]
      }
      const reload = feed.events.find((e) => e.type === 'plugin/reloaded')
      assert.equal(reload?.data.ok, true)
      assert.equal(reload?.data.to?.version, '1.0.1')
      child.kill('SIGINT')
      const code = await new Promise((done) => child.once('exit', done))
      assert.equal(code, 0, err)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      rmSync(copy.dir, { recursive: true, force: true })
    }
  })

  it('reloads on each of three saves by write-then-rename (an atomic save and the two after it)', async () => {
    const copy = reloadPresetCopy()
    const child = spawn(process.execPath, [bin, 'playground', '--preset', copy.preset, '--port', '0', '--watch', '--debounce', '20'], {
      cwd: copy.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = '',
      err = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    // Polls what the process printed until it shows what is awaited; 30 s is a deadline for a lost line, not a measure.
    const until = async (what: () => boolean, label: string) => {
      const end = Date.now() + 30_000
      while (!what()) {
        if (child.exitCode !== null || Date.now() > end) assert.fail(`${label}; exit ${child.exitCode}\nstdout: ${out}\nstderr: ${err}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    try {
      await until(() => /reload-policy {2}followup:reload-policy/.test(err), 'the watched folders are listed')
      const versions = ['1.0.0', '1.0.1', '1.0.2', '1.0.3']
      for (let i = 1; i < versions.length; i++) {
        edited(join(copy.dir, 'reload-policy'), versions[i], `v${i + 1}`, 'atomic')
        const line = new RegExp(
          `reloaded reload-policy in followup: ${versions[i - 1].replaceAll('.', '\\.')} → ${versions[i].replaceAll('.', '\\.')} `,
        )
        await until(() => line.test(out), `save #${i} (write-then-rename) is reloaded`)
      }
      assert.doesNotMatch(err, /reload of reload-policy failed/)
      child.kill('SIGINT')
      const code = await new Promise((done) => child.once('exit', done))
      assert.equal(code, 0, err)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      rmSync(copy.dir, { recursive: true, force: true })
    }
  })

  /** Start `cordage playground` and wait for the address it prints; `stop` sends SIGINT and resolves with the exit code. */
  async function cli(args: string[], env: Record<string, string> = {}) {
    const preset = defaultPresetCopy()
    const child = spawn(process.execPath, [bin, 'playground', '--preset', preset, '--port', '0', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out = { err: '' }
    child.stderr.on('data', (chunk) => {
      out.err += chunk
    })
    const end = Date.now() + 30_000
    let match: RegExpExecArray | null = null
    while (!(match = /on (http:\/\/127\.0\.0\.1:\d+)\/\?token=([\w.~-]+) /.exec(out.err))) {
      if (child.exitCode !== null || Date.now() > end) {
        child.kill('SIGKILL')
        assert.fail(`no address printed; exit ${child.exitCode}\n${out.err}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    const stop = async () => {
      child.kill('SIGINT')
      return child.exitCode ?? (await new Promise<number | null>((done) => child.once('exit', done)))
    }
    return { origin: match[1], token: match[2], out, stop }
  }

  it('prints the address with the token (--token), and prints each swap made through the API with who asked', async () => {
    const given = 'cli-given-token-0123456789'
    const { origin, token, out, stop } = await cli(['--token', given])
    try {
      assert.equal(token, given)
      const swap = await fetch(`${origin}/api/agents/followup/swap`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plugin: 'policy-rules', config: { default: 'ask', approvers: ['*'] }, by: 'alice' }),
      })
      assert.equal(swap.status, 200)
      const end = Date.now() + 10_000
      while (!out.err.includes('swapped policy-rules in followup')) {
        if (Date.now() > end) assert.fail(out.err)
        await new Promise((r) => setTimeout(r, 50))
      }
      assert.match(out.err, /swapped policy-rules in followup: policy-rules@2\.1\.0 → policy-rules@2\.1\.0 by "alice" \(playground\)/)
    } finally {
      assert.equal(await stop(), 0, out.err)
    }
  })

  it('takes the token from $CORDAGE_PLAYGROUND_TOKEN, and --read-only refuses changes', async () => {
    const { origin, token, out, stop } = await cli(['--read-only'], { CORDAGE_PLAYGROUND_TOKEN: 'env-given-token-0123456789' })
    try {
      assert.equal(token, 'env-given-token-0123456789')
      assert.match(out.err, /\(read-only\) \(Ctrl-C to stop\)/)
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
      assert.equal((await fetch(`${origin}/api/runs`, { headers })).status, 200)
      assert.equal(
        (await fetch(`${origin}/api/runs`, { method: 'POST', headers, body: JSON.stringify({ agent: 'followup' }) })).status,
        403,
      )
    } finally {
      assert.equal(await stop(), 0, out.err)
    }
  })

  it('refuses a --token that is too short, without echoing it', async () => {
    const child = spawn(process.execPath, [bin, 'playground', '--preset', defaultPresetCopy(), '--port', '0', '--token', 'tooshort'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let err = ''
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    const code = await new Promise((done) => child.once('exit', done))
    assert.equal(code, 2)
    assert.match(err, /at least 16 characters/)
    assert.ok(!err.includes('tooshort'))
  })

  it('refuses --debounce without --watch', async () => {
    const child = spawn(process.execPath, [bin, 'playground', '--port', '0', '--debounce', '20'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    const code = await new Promise((done) => child.once('exit', done))
    assert.notEqual(code, 0)
    assert.match(err, /--debounce applies to --watch only/)
  })
})
