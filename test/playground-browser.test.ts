/**
 * The playground end to end in real headless Chromium (Debian's, driven by playwright-core): the page
 * shows the preset's agents and plugins, starts a run of the followup agent that pauses for approval,
 * is reloaded while the run waits and again while it runs, approves it in the page, sees run/end
 * COMPLETED arrive live with every seq exactly once, replays the run under policy-rules 2.x and
 * 1.x side by side, and shows a policy swap made through the API with who asked. The page is opened
 * with the address the playground prints (with its token), as a user would. Screenshots go to
 * tmp/playground-screenshots/ (git ignores tmp/).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startPlayground, type Playground } from '../playground/server.ts'
import { bearer, browserSkip, defaultPresetCopy, openPage, shots } from './playground-helpers.ts'

describe('playground in headless Chromium', { skip: browserSkip }, () => {
  let playground: Playground
  let browser: Browser
  let page: Page
  const errors: unknown[] = []
  let pageErrors: string[] = []

  before(async () => {
    // The followup model takes 1.5 s per answer, so there is time to reload the page while the run works.
    playground = await startPlayground({ preset: defaultPresetCopy(1500), port: 0, onError: (e) => errors.push(e) })
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  /** The seqs in the run's event table, in page order. */
  const seqs = () => page.$$eval('[data-testid=events] tr', (rows) => rows.map((r) => Number(r.getAttribute('data-seq'))))
  const status = () => page.textContent('[data-testid=run-status]')
  const ready = () => page.waitForSelector('body[data-ready=true]')
  const statusIs = (value: string) => page.waitForSelector(`[data-testid=run-status]:text-is("${value}")`)

  it('shows the agents with their plugins, pinned versions and service graph', async () => {
    await page.goto(playground.url)
    await ready()
    assert.equal(page.url(), `${playground.origin}/`, 'the token is taken out of the address bar')
    assert.match((await page.textContent('[data-testid=preset]')) ?? '', /preset\.yml$/)
    assert.equal(await page.textContent('[data-testid=version-support-policy-rules]'), '1.0.0')
    assert.equal(await page.textContent('[data-testid=version-followup-policy-rules]'), '2.1.0')
    const services = await page.textContent('[data-testid=services-followup]')
    assert.match(services ?? '', /policy-rules@2\.1\.0/)
    assert.match(services ?? '', /support-desk \^1\.0\.0/)
    await page.waitForSelector('[data-testid=plugin-events] tr[data-type="plugin/loaded"]')
    await page.screenshot({ path: join(shots, '1-agents.png'), fullPage: true })
  })

  let runId: string

  it('starts a followup run that pauses for approval, and a reload shows the same events once', async () => {
    await page.selectOption('[data-testid=start-agent]', 'followup')
    await page.click('[data-testid=start-button]')
    await statusIs('WAITING_APPROVAL')
    await page.waitForSelector('[data-testid=pending]:not([hidden])')
    runId = (await page.textContent('[data-testid=run-id]'))!
    assert.match(runId, /^run_/)
    assert.match((await page.textContent('[data-testid=pending-what]')) ?? '', /s1\.a1 record_followup/)
    assert.deepEqual(
      await seqs(),
      Array.from({ length: 11 }, (_, i) => i + 1),
    )

    await page.reload()
    await ready()
    await page.waitForSelector('[data-testid=pending]:not([hidden])')
    assert.equal(await page.textContent('[data-testid=run-id]'), runId, 'the reloaded page opens the same run')
    assert.match((await page.textContent('[data-testid=run-stream]')) ?? '', /restored 11 event\(s\), streaming after seq 11/)
    assert.deepEqual(
      await seqs(),
      Array.from({ length: 11 }, (_, i) => i + 1),
    )
    await page.screenshot({ path: join(shots, '2-waiting-approval.png'), fullPage: true })
  })

  it('approves in the page; reloaded mid-run, the page misses nothing and shows nothing twice; run/end COMPLETED arrives live', async () => {
    await page.fill('[data-testid=decide-by]', 'alice')
    await page.click('[data-testid=approve]')
    // The follow-up is recorded, and the model is thinking about its final answer: reload now.
    await page.waitForSelector('[data-testid=events] tr[data-type="tool/end"]')
    const before = await seqs()
    assert.ok(before.length < 25 && (await status()) === 'RUNNING', `reloaded mid-run (${before.length} events, ${await status()})`)
    await page.reload()
    await ready()
    await page.waitForSelector('[data-testid=events] tr[data-type="run/end"]', { timeout: 15_000 })
    await statusIs('COMPLETED')
    assert.deepEqual(
      await seqs(),
      Array.from({ length: 25 }, (_, i) => i + 1),
      'every seq exactly once, in order',
    )
    const end = await page.textContent('[data-testid=events] tr[data-type="run/end"]')
    assert.match(end ?? '', /COMPLETED steps=2/)
    const decided = await page.textContent('[data-testid=events] tr[data-type="tool/approval-decided"]')
    assert.match(decided ?? '', /approved by alice/)
    await page.waitForSelector('[data-testid=run-answer]:not([hidden])')
    assert.match((await page.textContent('[data-testid=run-answer]')) ?? '', /follow-up is recorded/)
    assert.match((await page.textContent(`[data-testid=runs] tr[data-run="${runId}"]`)) ?? '', /COMPLETED/)
    await page.screenshot({ path: join(shots, '3-completed.png'), fullPage: true })
  })

  it('replays the run under policy-rules 2.x and 1.x side by side and shows the differences', async () => {
    await page.selectOption('[data-testid=compare-run]', runId)
    await page.selectOption('[data-testid=compare-plugin]', 'policy-rules')
    await page.selectOption('[data-testid=compare-a]', '2.1.0')
    await page.selectOption('[data-testid=compare-b]', '1.0.0')
    await page.click('[data-testid=compare-button]')
    await page.waitForSelector('[data-testid=compare-result]:not([hidden])', { timeout: 20_000 })
    const outcome = await page.textContent('[data-testid=compare-outcome]')
    assert.match(outcome ?? '', /A: policy-rules@2\.1\.0.*B: policy-rules@1\.0\.0/)
    // Alice's approval is replayed for that call, never given again as hers; the follow-up is the recording's.
    assert.match(outcome ?? '', /alice's recorded approval of s1\.a1 \(record_followup\) replayed as replay:alice/)
    assert.match(outcome ?? '', /record_followup s1\.a1: answered from the recorded result, not run/)
    assert.equal(await page.textContent('[data-testid=compare-outcome] tr[data-key=status] td:nth-of-type(1)'), 'COMPLETED')
    assert.equal(await page.textContent('[data-testid=compare-outcome] tr[data-key=status] td:nth-of-type(2)'), 'COMPLETED')
    assert.match((await page.textContent('[data-testid=compare-outcome] tr[data-key=dropped]')) ?? '', /approvers/)
    assert.equal(await page.getAttribute('[data-testid=compare-events] tr[data-type="tool/decision"]', 'data-kind'), 'changed')
    const decision = await page.textContent('[data-testid=compare-events] tr[data-type="tool/decision"]')
    assert.match(decision ?? '', /policy-rules@2\.1\.0.*policy-rules@1\.0\.0.*differs: producer, data\.policyVersion/)
    assert.match(
      (await page.textContent('[data-testid=compare-summary]')) ?? '',
      /\d+ same, \d+ changed, 0 only in A, 0 only in B; outcome the same/,
    )
    await page.locator('#compare').screenshot({ path: join(shots, '4-compare.png') })
    assert.deepEqual(pageErrors, [])
  })

  it('shows a swap of the policy made through the API in the plugin events, with who asked, and the card follows', async () => {
    const response = await fetch(`${playground.origin}/api/agents/followup/swap`, {
      method: 'POST',
      headers: { ...bearer(playground), 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'policy-rules', version: '1.0.0', config: { default: 'deny' }, by: 'alice' }),
    })
    assert.equal(response.status, 200, await response.clone().text())
    const row = await page.waitForSelector('[data-testid=plugin-events] tr[data-type="plugin/swapped"][data-by=alice]')
    assert.match(
      (await row.textContent()) ?? '',
      /followup.*policy-rules@1\.0\.0.*swapped policy-rules@2\.1\.0 → policy-rules@1\.0\.0 \(version 1\.0\.0, config \{"default":"deny"\}\) by alice via playground/,
    )
    await page.waitForSelector('[data-testid=version-followup-policy-rules]:text-is("1.0.0")')
    assert.deepEqual(pageErrors, [])
  })
})
