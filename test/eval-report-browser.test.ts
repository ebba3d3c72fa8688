/**
 * The eval report (core/eval/report.ts) in real headless Chromium, opened from a file as a user
 * would: the charts draw (one visible bar per variant, a curve per varied setting, the failure mix),
 * the tooltips carry the exact figures, the tables have their rows, and the page logs no error and
 * asks the network for nothing. The screenshot goes to tmp/playground-screenshots/eval-report.png,
 * with the playground's. Every expectation is worked out from the result, so `suiteResult` can return
 * any result, a real `runSuite` one included (it needs a varied setting and a failed check).
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { renderReport } from '../core/eval/report.ts'
import type { SuiteResult } from '../core/eval/result.ts'
import { tempDir } from './temp.ts'
import { loadSuite } from '../core/eval/load.ts'
import { runSuite } from '../core/eval/suite.ts'
import { parseVariants } from '../core/eval/variants.ts'
import { browserSkip, openPage, shots } from './playground-helpers.ts'

/**
 * The result the report is drawn from: a real run of the project's support suite, with the verifier and
 * the policy ablated and the step budget varied (a sensitivity curve), as `cordage eval` would run it.
 */
async function suiteResult(): Promise<SuiteResult> {
  const suite = join(import.meta.dirname, '../evals/support')
  return runSuite({
    suite: 'evals/support',
    cases: loadSuite(suite),
    variants: parseVariants({ ablate: ['verifier,policy'], vary: ['maxSteps=1,3,8'] }),
  })
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

  /** The variants as the report orders them: the full harness first, then as the result lists them. */
  const order = () => {
    const full = result.variants.filter((v) => v.kind === 'full').map((v) => v.id)
    return [...full, ...result.summaries.map((s) => s.variant).filter((id) => !full.includes(id))]
  }
  const summary = (id: string) => result.summaries.find((s) => s.variant === id)!

  it('draws one success bar per variant, in the ablation order, heights in proportion, figures in a tooltip', async () => {
    const bars = await page.$$eval('[data-chart=chart-success] rect.bar.success', (rects) =>
      rects.map((r) => ({
        variant: r.getAttribute('data-variant')!,
        box: r.getBoundingClientRect().toJSON(),
        title: r.querySelector('title')?.textContent ?? '',
      })),
    )
    assert.deepEqual(
      bars.map((b) => b.variant),
      order(),
    )
    const perUnit = bars.map((b) => b.box.height / summary(b.variant).verifiedSuccessRate).filter(Number.isFinite)
    assert.ok(perUnit.length > 0, 'some variant verified a case')
    for (const bar of bars) {
      const rate = summary(bar.variant).verifiedSuccessRate
      assert.ok(bar.box.width > 0, `${bar.variant}: the bar has a width`)
      assert.ok(Math.abs(bar.box.height - rate * perUnit[0]!) < 0.5, `${bar.variant}: height ${bar.box.height} for ${rate}`)
      assert.ok(
        bar.title.startsWith(`${bar.variant}: verified success ${Math.round(rate * 1000) / 10}% of ${summary(bar.variant).cases} case(s)`),
        bar.title,
      )
    }
    for (const series of ['passed', 'cost']) {
      const sizes = await page.$$eval(`[data-chart=chart-success] rect.bar.${series}`, (rects) =>
        rects.map((r) => ({ variant: r.getAttribute('data-variant')!, height: r.getBoundingClientRect().height })),
      )
      assert.deepEqual(
        sizes.map((b) => b.variant),
        order(),
        series,
      )
      for (const { variant, height } of sizes) {
        const value = series === 'passed' ? summary(variant).passed : summary(variant).costUsd
        assert.equal(height > 0, value > 0, `${series} of ${variant}: ${height} px for ${value}`)
      }
    }
  })

  it('draws a curve per varied setting with its points in numeric order, and the failure mix by code', async () => {
    const axes = new Map<string, number[]>()
    for (const v of result.variants) if (v.kind === 'vary') axes.set(v.axis!, [...(axes.get(v.axis!) ?? []), Number(v.value)])
    assert.ok(axes.size > 0, 'the result varies a setting')
    for (const [axis, values] of axes) {
      const points = await page.$$eval(`[data-axis="${axis}"] circle.point.success`, (cs) =>
        cs.map((c) => ({ value: Number(c.getAttribute('data-value')), x: c.getBoundingClientRect().x })),
      )
      assert.deepEqual(
        points.map((p) => p.value),
        [...values].sort((a, b) => a - b),
        axis,
      )
      assert.ok(
        points.every((p, i) => i === 0 || p.x > points[i - 1]!.x),
        `${axis}: left to right by value`,
      )
    }
    const segments = await page.$$eval('[data-chart=chart-failures] rect.segment', (rects) =>
      rects.map((r) => ({ code: r.getAttribute('data-code')!, width: r.getBoundingClientRect().width })),
    )
    const totals = new Map<string, number>()
    for (const s of result.summaries) for (const [code, n] of Object.entries(s.failureMix)) totals.set(code, (totals.get(code) ?? 0) + n)
    assert.ok(segments.length > 0 && segments.every((s) => s.width > 0))
    assert.deepEqual([...new Set(segments.map((s) => s.code))].sort(), [...totals.keys()].sort())
    const legend = await page.$$eval('[data-chart=chart-failures] .legend .key', (keys) => keys.map((k) => k.textContent))
    assert.deepEqual(
      legend,
      [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, n]) => `${code} (${n})`),
    )
  })

  it('has the tables: a row per variant with what changed, a row per case, and each failed check', async () => {
    const variants = await page.$$eval('[data-table=ablation] tbody tr', (rows) =>
      rows.map((r) => [r.getAttribute('data-row'), r.textContent]),
    )
    assert.deepEqual(
      variants.map(([id]) => id),
      order(),
    )
    for (const [id, text] of variants) for (const change of summary(id!).changed) assert.ok(text!.includes(change), `${id}: ${change}`)
    assert.equal(await page.locator('[data-table=cases] tbody tr').count(), new Set(result.runs.map((r) => r.case)).size)
    const failed = result.runs.filter((r) => !r.ok && r.checks.some((c) => !c.ok))
    assert.ok(failed.length > 0, 'some check failed')
    for (const run of failed) {
      const text = await page.textContent(`article.failure[data-case="${run.case}"][data-variant="${run.variant}"]`)
      for (const check of run.checks.filter((c) => !c.ok))
        for (const part of [check.name, check.expected, check.actual])
          assert.ok(text!.includes(part), `${run.case} × ${run.variant}: ${part}`)
    }
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
