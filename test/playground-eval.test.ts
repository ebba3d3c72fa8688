/**
 * The playground's link to the latest eval report (playground/eval-report.ts), on a real playground
 * over presets/default.yml with its working directory in a temp folder: before any report, the route
 * answers 404 in the playground's error shape and the page shows no link; once `cordage eval --report`
 * has left .cordage/eval/latest.html there, the route serves that file under the report's strict,
 * sandboxing policy, reached by a ticket that opens that route alone (never the token in an address),
 * and the page shows the link, which opens the report in Chromium.
 */
import assert from 'node:assert/strict'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { latestReportPath, renderReport } from '../core/eval/report.ts'
import { EvalReports, TicketMs } from '../playground/eval-report.ts'
import { startPlayground, type Playground } from '../playground/server.ts'
import { run, suite, variant } from './eval-report-builder.ts'
import { tempDir } from './temp.ts'
import { bearer, browserSkip, defaultPresetCopy, openPage, shots } from './playground-helpers.ts'

function writeReport(cwd: string): string {
  const html = renderReport(
    suite([variant('full', 'full'), variant('-verifier')], [run('refund', 'full', 'ok'), run('refund', '-verifier', 'wrong-answer')]),
  )
  const file = latestReportPath(cwd)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, html)
  return html
}

describe('playground: the latest eval report', () => {
  let playground: Playground
  let cwd: string
  const errors: unknown[] = []

  before(async () => {
    cwd = tempDir('cordage-playground-eval-')
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, cwd, onError: (e) => errors.push(e) })
  })

  after(async () => {
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  const json = (response: Response): Promise<any> => response.json()
  const get = (path: string, headers: Record<string, string> = bearer(playground)) => fetch(`${playground.origin}${path}`, { headers })

  it('says there is none and answers 404 in the error shape before any report', async () => {
    const info = await get('/api/eval')
    assert.equal(info.status, 200)
    assert.deepEqual(await json(info), { latest: null })
    const page = await get('/api/eval/latest')
    assert.equal(page.status, 404)
    const body = await json(page)
    assert.equal(body.error.code, 'invalid_input')
    assert.match(body.error.message, /no eval report yet: run `cordage eval SUITE --report FILE`/)
    assert.ok(body.error.message.includes(latestReportPath(cwd)), 'it says where the report is looked for')
    assert.equal((await get('/api/eval', {})).status, 401, 'the token is needed to ask')
  })

  it('serves the report, once written, by the ticket of its link, sandboxed under the report policy', async () => {
    const html = writeReport(cwd)
    const info = await json(await get('/api/eval'))
    assert.equal(info.latest.bytes, Buffer.byteLength(html))
    assert.match(info.latest.href, /^\/api\/eval\/latest\?ticket=[\w-]{24}$/)
    assert.ok(!info.latest.href.includes(playground.token), 'the token never goes into the link')

    // Opened as a link: no header, only the ticket.
    const page = await get(info.latest.href, {})
    assert.equal(page.status, 200)
    assert.equal(await page.text(), html)
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
    const policy = page.headers.get('content-security-policy') ?? ''
    for (const directive of ["default-src 'none'", "style-src 'unsafe-inline'", 'img-src data:', "frame-ancestors 'none'", 'sandbox'])
      assert.ok(policy.split('; ').includes(directive), `${directive} in ${policy}`)
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer')

    // With the token, as a script would.
    assert.equal(await (await get('/api/eval/latest')).text(), html)
    // Asked again, the same link: the page can poll without making tickets.
    assert.equal((await json(await get('/api/eval'))).latest.href, info.latest.href)
  })

  it('refuses a wrong ticket, the ticket on another route, the token in the address, and other methods', async () => {
    const { latest } = await json(await get('/api/eval'))
    const ticket = new URL(latest.href, playground.origin).searchParams.get('ticket')!
    const wrong = ticket.slice(0, -1) + (ticket.endsWith('A') ? 'B' : 'A')
    const refused: [string, string, Record<string, string>][] = [
      ['a wrong ticket', `/api/eval/latest?ticket=${wrong}`, {}],
      ['no ticket', '/api/eval/latest', {}],
      ['the ticket on the runs', `/api/runs?ticket=${ticket}`, {}],
      ['the ticket on the eval info', `/api/eval?ticket=${ticket}`, {}],
      ['the token in the query (only the streams take it)', `/api/eval/latest?token=${playground.token}`, {}],
      ['a right ticket with a wrong header', latest.href, { authorization: 'Bearer wrong-wrong-wrong-wrong' }],
    ]
    for (const [label, path, headers] of refused) {
      const answer = await get(path, headers)
      assert.equal(answer.status, 401, label)
      assert.equal((await json(answer)).error.code, 'unauthorized', label)
    }
    const post = await fetch(`${playground.origin}/api/eval/latest`, {
      method: 'POST',
      headers: { ...bearer(playground), 'content-type': 'application/json' },
      body: '{}',
    })
    assert.equal(post.status, 405)
  })

  it('answers 404 again when the report is gone', async () => {
    rmSync(latestReportPath(cwd))
    assert.deepEqual(await json(await get('/api/eval')), { latest: null })
    assert.equal((await get('/api/eval/latest')).status, 404)
  })
})

describe('eval report tickets', () => {
  it('open the report for 10 minutes; a new one comes at half-life and the one before still opens until it expires', () => {
    let now = 1_000_000
    const reports = new EvalReports('/nowhere', () => now)
    const first = reports.ticket()
    assert.ok(reports.admits(first))
    assert.ok(!reports.admits(null) && !reports.admits('') && !reports.admits(`${first}x`))
    now += TicketMs / 2 - 1
    assert.equal(reports.ticket(), first, 'the same ticket while it has more than half its life')
    now += 2
    const second = reports.ticket()
    assert.notEqual(second, first)
    assert.ok(reports.admits(first) && reports.admits(second))
    now += TicketMs / 2
    assert.ok(!reports.admits(first), 'the first has expired')
    assert.ok(reports.admits(second))
    now += TicketMs
    assert.ok(!reports.admits(second))
  })
})

describe('playground page: the link to the latest eval report, in Chromium', { skip: browserSkip }, () => {
  it('shows no link without a report, and one that opens the report once there is one', async () => {
    const cwd = tempDir('cordage-playground-eval-page-')
    const playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, cwd })
    const { browser, page, pageErrors } = await openPage()
    try {
      await page.goto(playground.url)
      await page.waitForSelector('body[data-ready=true]')
      assert.equal(await page.isHidden('[data-testid=eval-link]'), true)

      writeReport(cwd)
      await page.reload()
      await page.waitForSelector('body[data-ready=true]')
      const link = page.locator('[data-testid=eval-link]')
      await link.waitFor({ state: 'visible' })
      assert.equal(await link.textContent(), 'Latest eval report')
      assert.match((await link.getAttribute('href')) ?? '', /^\/api\/eval\/latest\?ticket=/)

      const [report] = await Promise.all([page.context().waitForEvent('page'), link.click()])
      report.on('console', (message) => pageErrors.push(`report: ${message.type()} ${message.text()}`))
      await report.waitForLoadState()
      assert.match(await report.title(), /^Eval report: evals\//)
      const bars = await report.$$eval('[data-chart=chart-success] rect.bar.success', (rects) =>
        rects.map((r) => r.getBoundingClientRect().height),
      )
      assert.equal(bars.length, 2)
      assert.ok(bars[0]! > 0 && bars[1] === 0, `full verified its case, -verifier did not: ${bars}`)
      await report.screenshot({ path: join(shots, 'eval-report-from-playground.png') })
      assert.deepEqual(pageErrors, [])
    } finally {
      await browser.close()
      await playground.close()
    }
  })
})
