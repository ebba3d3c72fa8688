/**
 * The approval card shows the preview recorded with the request (issue 12), in real headless Chromium:
 * a run waits for approval of a write whose preview is a diff; the page shows one row per diff line,
 * added and removed lines with their classes, and the record and amount; a preview holding `<script>`
 * and `<img onerror>` is shown as text and runs nothing; approving in the page runs the call once.
 * Screenshot: tmp/playground-screenshots/preview-1-diff.png.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { stringify } from 'yaml'
import { startPlayground, type Playground } from '../playground/server.ts'
import { tempDir } from './temp.ts'
import { browserSkip, openPage, shots } from './playground-helpers.ts'

function presetWithPreviews(): { file: string; dir: string } {
  const dir = tempDir('cordage-playground-preview-')
  const agent = (mode: string) => ({
    description: `writes a note (${mode} preview)`,
    task: 'Write the note.',
    budgets: { maxSteps: 4 },
    model: {
      plugin: 'model-scripted',
      config: {
        script: [{ tool: 'write_note', args: { path: 'notes/today.md', text: 'ship the previews', mode } }, { final: 'Written.' }],
      },
    },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      {
        plugin: 'policy-rules',
        config: { default: 'deny', approvers: ['*'], rules: [{ id: 'writes', verdict: 'ask', match: { tool: 'write_note' } }] },
      },
      { path: resolve(import.meta.dirname, 'fixtures/plugins/preview-desk'), config: { log: 'previews.jsonl' } },
      'previews',
    ],
  })
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify({ cordage: 1, agents: { writer: agent('ok'), hostile: agent('html') } }))
  return { file, dir }
}

describe('playground: the preview of a pending approval, in headless Chromium', { skip: browserSkip }, () => {
  let playground: Playground
  let browser: Browser
  let page: Page
  let pageErrors: string[] = []
  let dir: string
  const errors: unknown[] = []
  const log = () =>
    existsSync(join(dir, 'previews.jsonl'))
      ? readFileSync(join(dir, 'previews.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { kind: string; tool: string })
      : []

  before(async () => {
    const preset = presetWithPreviews()
    dir = preset.dir
    playground = await startPlayground({ preset: preset.file, port: 0, onError: (e) => errors.push(e) })
    ;({ browser, page, pageErrors } = await openPage())
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready=true]')
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  const start = async (agent: string) => {
    await page.selectOption('[data-testid=start-agent]', agent)
    await page.click('[data-testid=start-button]')
    await page.waitForSelector('[data-testid=run-status]:text-is("WAITING_APPROVAL")')
    await page.waitForSelector('[data-testid=pending]:not([hidden]) [data-testid=preview-summary]')
  }

  it('shows the diff one line per row, added and removed lines with their classes, with the record and the amount', async () => {
    await start('writer')
    assert.equal(await page.textContent('[data-testid=preview-summary]'), 'write 17 characters to notes/today.md')
    assert.equal(await page.textContent('[data-testid=preview-amount]'), 'Amount: 12.5 EUR')
    assert.deepEqual(JSON.parse((await page.textContent('[data-testid=preview-record]'))!), {
      path: 'notes/today.md',
      text: 'ship the previews',
    })
    const rows = await page.$$eval('[data-testid=preview-diff] .diff-line', (nodes) => nodes.map((n) => [n.className, n.textContent]))
    assert.deepEqual(rows, [
      ['diff-line diff-file', '--- a/notes/today.md'],
      ['diff-line diff-file', '+++ b/notes/today.md'],
      ['diff-line diff-hunk', '@@ -1 +1 @@'],
      ['diff-line diff-removed', '-old line'],
      ['diff-line diff-added', '+ship the previews'],
    ])
    // Coloured by the stylesheet: an added row is not a removed row. Waited for (not read once), so a
    // stylesheet still being applied on a busy machine is not a failure; one that never applies is, and
    // the message carries what the page reported (a failed load is logged to its console).
    const coloured = await page
      .waitForFunction(
        () => {
          const doc = (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document
          const view = globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          const added = doc.querySelector('[data-testid=preview-diff] .diff-added')
          const removed = doc.querySelector('[data-testid=preview-diff] .diff-removed')
          return !!added && !!removed && view.getComputedStyle(added).backgroundColor !== view.getComputedStyle(removed).backgroundColor
        },
        null,
        { timeout: 10_000 },
      )
      .then(
        () => true,
        () => false,
      )
    assert.ok(coloured, `added and removed rows have the same background; the page reported: ${JSON.stringify(pageErrors)}`)
    await page.screenshot({ path: join(shots, 'preview-1-diff.png'), fullPage: true })
    assert.deepEqual(
      log().map((e) => e.kind),
      ['preview'],
    )
  })

  it('approving in the page runs the call once, and the preview is not run again', async () => {
    await page.fill('[data-testid=decide-by]', 'alice')
    await page.click('[data-testid=approve]')
    await page.waitForSelector('[data-testid=run-status]:text-is("COMPLETED")', { timeout: 20_000 })
    assert.deepEqual(
      log().map((e) => [e.kind, e.tool]),
      [
        ['preview', 'write_note'],
        ['write', 'write_note'],
      ],
    )
  })

  it('shows markup in a preview as text: no script runs, no element is made of it', async () => {
    await start('hostile')
    const rows = await page.$$eval('[data-testid=preview-diff] .diff-line', (nodes) => nodes.map((n) => n.textContent))
    assert.ok(rows.includes('+<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'), JSON.stringify(rows))
    assert.equal(
      await page.$$eval(
        '[data-testid=pending-preview] script, [data-testid=pending-preview] img, [data-testid=pending-preview] b',
        (n) => n.length,
      ),
      0,
    )
    assert.equal(await page.evaluate(() => (globalThis as { pwned?: number }).pwned), undefined)
    assert.deepEqual(pageErrors, [])
  })
})
