/**
 * The eval report (core/eval/report.ts) in real headless Chromium, opened from a file as a user
 * would: the charts draw (one visible bar per variant, a curve per varied setting, the failure mix),
 * the tooltips carry the exact figures, the tables have their rows, and the page logs no error and
 * asks the network for nothing. The screenshot goes to tmp/playground-screenshots/eval-report.png,
 * with the playground's.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { renderReport } from '../core/eval/report.ts'
import type { SuiteResult } from '../core/eval/result.ts'
import { tempDir } from './helpers.ts'
import { run, suite, variant } from './eval-report-builder.ts'
import { browserSkip, openPage, shots } from './playground-helpers.ts'

/** The result the report is drawn from: the one place to change to draw a real `runSuite` result instead. */
async function suiteResult(): Promise<SuiteResult> {
  const variants = [
    variant('full', 'full'),
    variant('-verifier', 'ablate', { mechanism: 'verifier', label: 'verifier switched off' }),
    variant('-policy', 'ablate', { mechanism: 'policy', label: 'policy switched off' }),
    variant('maxSteps=1', 'vary', { axis: 'maxSteps', value: 1 }),
    variant('maxSteps=8', 'vary', { axis: 'maxSteps', value: 8 }),
    variant('maxSteps=3', 'vary', { axis: 'maxSteps', value: 3 }),
  ]
  const cases = ['refund-approved', 'wrong-answer-caught', 'unapproved-write', 'tool-timeout', 'crash-resume']
  const runs = variants.flatMap((v) =>
    cases.map((c, i) => {
      const extra = { costUsd: 0.001 * (i + 1) * (v.id === 'maxSteps=8' ? 2 : 1), latencyMs: 80 + 40 * i, tokens: 250 + 50 * i }
      if (v.id === '-verifier' && c === 'wrong-answer-caught') return run(c, v.id, 'wrong-answer', extra)
      if (v.id === '-policy' && c === 'unapproved-write')
        return run(
          c,
          v.id,
          { status: 'COMPLETED' },
          { ...extra, ok: false, checks: [{ name: 'sideEffects.followups', ok: false, expected: '0', actual: '1' }] },
        )
      if (v.id === 'maxSteps=1' && i >= 2) return run(c, v.id, { status: 'STOPPED', failureCode: 'max_steps' }, extra)
      if (v.id === 'maxSteps=3' && i === 4) return run(c, v.id, { status: 'STOPPED', failureCode: 'max_steps' }, extra)
      if (c === 'tool-timeout' && v.id !== 'full') return run(c, v.id, { status: 'FAILED', failureCode: 'tool_timeout' }, extra)
      return run(c, v.id, 'ok', extra)
    }),
  )
  return suite(variants, runs, { suite: 'evals/support' })
}

describe('eval report in headless Chromium', { skip: browserSkip }, () => {
  let browser: Browser
  let page: Page
  let pageErrors: string[] = []
  const requests: string[] = []
  let result: SuiteResult

  before(async () => {
    result = await suiteResult()
    const file = join(tempDir('cordage-eval-report-'), 'report.html')
    writeFileSync(file, renderReport(result))
    ;({ browser, page, pageErrors } = await openPage())
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(pathToFileURL(file).href)
  })

  after(async () => {
    await browser?.close()
  })

  it('draws one visible success bar per variant, in the ablation order, with its figures in a tooltip', async () => {
    const bars = await page.$$eval('[data-chart=chart-success] rect.bar.success', (rects) =>
      rects.map((r) => ({
        variant: r.getAttribute('data-variant'),
        box: r.getBoundingClientRect().toJSON(),
        title: r.querySelector('title')?.textContent,
      })),
    )
    assert.deepEqual(
      bars.map((b) => b.variant),
      result.summaries.map((s) => s.variant),
    )
    for (const bar of bars)
      assert.ok(bar.box.width > 0 && bar.box.height > 0, `${bar.variant}: the bar is visible (${JSON.stringify(bar.box)})`)
    const full = bars.find((b) => b.variant === 'full')
    const verifierOff = bars.find((b) => b.variant === '-verifier')
    assert.ok(full && verifierOff && full.box.height > verifierOff.box.height, 'the full harness succeeds more than without the verifier')
    assert.equal(verifierOff.title, '-verifier: verified success 60% of 5 case(s) (completed, with an answer that meets the case)')
    for (const series of ['passed', 'cost']) {
      const sizes = await page.$$eval(`[data-chart=chart-success] rect.bar.${series}`, (rects) =>
        rects.map((r) => r.getBoundingClientRect().height),
      )
      assert.equal(sizes.length, result.summaries.length, series)
      assert.ok(
        sizes.every((h) => h > 0),
        `${series}: every bar is visible (${sizes})`,
      )
    }
  })

  it('draws the maxSteps curve with its points in numeric order, and the failure mix by code', async () => {
    const points = await page.$$eval('[data-axis=maxSteps] circle.point.success', (cs) =>
      cs.map((c) => ({ value: c.getAttribute('data-value'), x: c.getBoundingClientRect().x })),
    )
    assert.deepEqual(
      points.map((p) => p.value),
      ['1', '3', '8'],
    )
    assert.ok(points[0]!.x < points[1]!.x && points[1]!.x < points[2]!.x, 'left to right by value')
    const segments = await page.$$eval('[data-chart=chart-failures] rect.segment', (rects) =>
      rects.map((r) => ({ code: r.getAttribute('data-code'), width: r.getBoundingClientRect().width })),
    )
    assert.ok(segments.length > 0 && segments.every((s) => s.width > 0))
    assert.deepEqual([...new Set(segments.map((s) => s.code))].sort(), ['max_steps', 'tool_timeout'])
    const legend = await page.$$eval('[data-chart=chart-failures] .legend .key', (keys) => keys.map((k) => k.textContent))
    assert.deepEqual(legend, ['max_steps (4)', 'tool_timeout (4)'])
  })

  it('has the tables: a row per variant and per case, and what failed', async () => {
    const variants = await page.$$eval('[data-table=ablation] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-row')))
    assert.deepEqual(variants, ['full', '-verifier', '-policy', 'maxSteps=1', 'maxSteps=8', 'maxSteps=3'])
    assert.equal(await page.locator('[data-table=cases] tbody tr').count(), 5)
    const wrong = await page.textContent('article.failure[data-case=wrong-answer-caught][data-variant="-verifier"]')
    assert.match(wrong ?? '', /answer\.includes.*\[source: T-1\].*I made this up/s)
  })

  it('logs no error, asks the network for nothing, and is saved as a screenshot', async () => {
    await page.screenshot({ path: join(shots, 'eval-report.png'), fullPage: true })
    assert.deepEqual(pageErrors, [])
    assert.deepEqual(
      requests.filter((url) => !url.startsWith('file:')),
      [],
    )
  })
})
