/**
 * The playground's trace view in real headless Chromium (Debian's, driven by playwright-core), on a run
 * with a tool call that fails transiently and is retried, and an action that waits for approval
 * (test/playground-trace-preset.ts). The test starts the run in the page and follows the timeline live:
 * a model call's bar is open while the model thinks, the approval's bar is open and grows while the run
 * waits, and once the page approves, every bar closes and the run's end arrives. Then it checks the bars
 * (which, in what order, with what labels, and that each bar's width and offset are its recorded
 * duration and start on the timeline's scale), and the detail of each step: the task, the context the
 * model saw (rebuilt, with provenance), its answer, the proposal, the policy decision, the approval, each
 * attempt's raw result, the observation, the verification and the state change.
 * Screenshots: tmp/playground-screenshots/trace-*.png.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startPlayground, type Playground } from '../playground/server.ts'
import { browserSkip, openPage, shots } from './playground-helpers.ts'
import { tracePresetCopy } from './playground-trace-preset.ts'

interface Bar {
  span: string
  kind: string
  status: string
  open: boolean
  label: string
  meta: string
  start: number
  end?: number
  /** The bar's box and its track's, in pixels. */
  left: number
  width: number
  trackLeft: number
  trackWidth: number
}

describe('the trace view in headless Chromium', { skip: browserSkip }, () => {
  let playground: Playground
  let browser: Browser
  let page: Page
  const errors: unknown[] = []
  let pageErrors: string[] = []

  before(async () => {
    // Each model answer takes 2.5 s and each check_stock attempt 0.3 s: long enough to see open bars, also on a busy machine.
    playground = await startPlayground({ preset: tracePresetCopy(2500, 300), port: 0, onError: (e) => errors.push(e) })
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  const timeline = '[data-testid=trace-timeline]'
  const bars = (): Promise<Bar[]> =>
    page.$$eval(`${timeline} .trace-row[data-span]`, (rows) =>
      rows.map((r) => {
        const bar = r.querySelector('.trace-bar')!.getBoundingClientRect()
        const track = r.querySelector('.trace-track')!.getBoundingClientRect()
        return {
          span: r.getAttribute('data-span')!,
          kind: r.getAttribute('data-kind')!,
          status: r.getAttribute('data-status')!,
          open: r.getAttribute('data-open') === 'true',
          label: r.querySelector('.trace-name')!.textContent!,
          meta: r.querySelector('.trace-meta')!.textContent!,
          start: Number(r.getAttribute('data-start')),
          end: r.getAttribute('data-end') === null ? undefined : Number(r.getAttribute('data-end')),
          left: bar.left,
          width: bar.width,
          trackLeft: track.left,
          trackWidth: track.width,
        }
      }),
    )
  const row = (span: string) => `${timeline} .trace-row[data-span="${span}"]`
  let runId: string

  it('follows the run live: the approval bar open and growing while the run waits, then an open bar while the model thinks, all closed at the end', async () => {
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready=true]')
    await page.selectOption('[data-testid=start-agent]', 'followup')
    await page.click('[data-testid=start-button]')
    await page.waitForSelector(`${row('s2.a1/approval')}[data-open=true]`, { timeout: 20_000 })
    runId = (await page.textContent('[data-testid=run-id]'))!
    const waiting = await bars()
    const open = waiting.filter((b) => b.open).map((b) => b.span)
    assert.deepEqual(
      open,
      ['run', 't1', 's2', 's2.a1', 's2.a1/approval'],
      'what is open while the run waits: the run, its turn, the step, the action and its approval',
    )
    assert.equal(waiting.find((b) => b.span === 's1.a1/tool#1')?.status, 'retried')
    assert.equal(waiting.find((b) => b.span === 's1.a1/tool#2')?.status, 'ok')
    assert.match((await page.textContent('[data-testid=trace-summary]')) ?? '', /^WAITING_APPROVAL · 15 spans · .* so far · 300 tok/)
    // An open bar grows with the clock while the run waits (the page redraws it up to now).
    const before = waiting.find((b) => b.span === 's2.a1/approval')!.width
    // (Polled from here: the page's CSP forbids the eval that waitForFunction with a string would need.)
    const approvalBar = page.locator(`${row('s2.a1/approval')} .trace-bar`)
    while (((await approvalBar.boundingBox())?.width ?? 0) <= before) await page.waitForTimeout(100)
    await page.locator('#trace').screenshot({ path: join(shots, 'trace-1-waiting-approval.png') })

    await page.fill('[data-testid=decide-by]', 'alice')
    await page.click('[data-testid=approve]')
    // The last model call: its bar is there, open, while the model thinks (the page follows the run, so
    // the kernel makes step/model-request durable before it calls the model).
    await page.waitForSelector(`${row('s3/model#1')}[data-open=true]`, { timeout: 20_000 })
    assert.equal(await page.getAttribute(row('run'), 'data-open'), 'true')
    assert.equal(await page.getAttribute(row('s2.a1/approval'), 'data-open'), 'false')
    await page.waitForSelector(`${timeline}[data-status=COMPLETED]`, { timeout: 20_000 })
    assert.equal(await page.$$eval(`${timeline} .trace-row[data-open=true]`, (rows) => rows.length), 0, 'no bar is left open')
  })

  it('draws one bar per span, in order, labelled, each as wide as its recorded duration on the scale of the run', async () => {
    const all = await bars()
    assert.deepEqual(
      all.map((b) => b.span.replace(/@\d+$/, '@N')),
      [
        'run',
        't1',
        's1',
        's1/context',
        's1/model#1',
        's1.a1',
        's1.a1/policy',
        's1.a1/tool#1',
        's1.a1/tool#2',
        's2',
        's2/context',
        's2/model#1',
        's2.a1',
        's2.a1/policy',
        's2.a1/approval',
        's2.a1/tool#1',
        's3',
        's3/context',
        's3/model#1',
        's3/verify@N',
      ],
    )
    const by = new Map(all.map((b) => [b.span.replace(/@\d+$/, '@N'), b]))
    const label = (span: string) => by.get(span)!.label
    assert.equal(label('run'), 'run followup')
    assert.equal(label('s1/model#1'), 'model model-scripted@1.2.0 #1')
    assert.equal(label('s1.a1'), 'check_stock s1.a1')
    assert.equal(label('s1.a1/policy'), 'policy allow')
    assert.equal(label('s1.a1/tool#1'), 'check_stock #1')
    assert.equal(label('s2.a1/policy'), 'policy ask')
    assert.equal(label('s2.a1/approval'), 'approval: approved by alice')
    assert.equal(label('s3/verify@N'), 'verify ok')
    assert.match(label('s3/context'), /^context 6 msgs ~\d+ tok$/)
    assert.deepEqual(
      all.map((b) => b.status),
      all.map((b) => (b.span === 's1.a1/tool#1' ? 'retried' : 'ok')),
      'every span ok but the attempt that was retried',
    )
    // Tokens and cost: each model call's own, summed up the tree; the run's is the kernel's total.
    assert.match(by.get('s1/model#1')!.meta, /· 150 tok · \$0\.0002$/)
    assert.match(by.get('s1')!.meta, /· 150 tok · \$0\.0002$/)
    assert.match(by.get('run')!.meta, /· 450 tok · \$0\.0006$/)
    assert.match(
      (await page.textContent('[data-testid=trace-summary]')) ?? '',
      /^COMPLETED · 20 spans · [\d.]+ s · 450 tok \(360 in, 90 out\) \$0\.0006$/,
    )

    // The scale: the run's bar spans the whole track, and every bar sits at its start and is as wide
    // as its duration (bars under 2 px are drawn 2 px wide so that they can be seen and clicked).
    const run = by.get('run')!
    const total = run.end! - run.start
    assert.ok(Math.abs(run.width - run.trackWidth) < 1 && Math.abs(run.left - run.trackLeft) < 1, 'the run spans the track')
    const scale = run.trackWidth / total
    for (const b of all) {
      const width = Math.max(2, (b.end! - b.start) * scale)
      assert.ok(
        Math.abs(b.width - width) < 1.5,
        `${b.span}: ${b.width.toFixed(1)}px wide for ${b.end! - b.start}ms, expected ${width.toFixed(1)}px`,
      )
      const left = (b.start - run.start) * scale
      assert.ok(
        Math.abs(b.left - b.trackLeft - left) < 1.5,
        `${b.span}: starts at ${(b.left - b.trackLeft).toFixed(1)}px, expected ${left.toFixed(1)}px`,
      )
    }
    // Children sit inside their parents on the timeline, and the retry follows the failed attempt.
    for (const [child, parent] of [
      ['s1.a1/tool#2', 's1.a1'],
      ['s1.a1', 's1'],
      ['s2.a1/approval', 's2.a1'],
      ['s3/verify@N', 's3'],
    ]) {
      const c = by.get(child)!
      const p = by.get(parent)!
      assert.ok(c.start >= p.start && c.end! <= p.end!, `${child} lies within ${parent}`)
    }
    assert.ok(by.get('s1.a1/tool#2')!.start >= by.get('s1.a1/tool#1')!.end!)
    // The waits and calls that take time are the wide bars: the approval outlasts a model call (1.2 s), which outlasts a tool attempt (0.3 s).
    assert.ok(by.get('s1/model#1')!.width > by.get('s1.a1/tool#1')!.width)
    await page.locator('#trace').screenshot({ path: join(shots, 'trace-2-completed.png') })
  })

  it('shows a step with a retried tool call: task, context with provenance, answer, proposal, policy, raw results, observation, state change', async () => {
    await page.click(row('s1'))
    await page.waitForSelector('[data-testid=trace-detail][data-step=s1]')
    const part = async (id: string) => (await page.textContent(`[data-testid=trace-detail] [data-testid=detail-${id}]`)) ?? ''
    assert.match(await part('task'), /Note on ticket T-1001 that the refund was approved\./)
    const context = await part('context')
    assert.match(
      context,
      /recorded \(step\/context, seq 4\) 2 messages, ~\d+ tokens, by context-basic@\d+\.\d+\.\d+; tools: lookup_policy, record_followup, slow_lookup, check_stock/,
    )
    assert.match(
      (await page.textContent('[data-testid=context-match]')) ?? '',
      /Rebuilt from the log by context-basic@\d+\.\d+\.\d+ \(state through seq 3\): 2 messages, ~\d+ tokens — matches the record/,
    )
    assert.deepEqual(
      await page.$$eval('[data-testid=context-messages] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-source'))),
      ['0', '2'],
      'the system prompt (not from the log) and the task (seq 2, turn/start)',
    )
    assert.match(context, /seq 2 turn\/start.*user.*Note on ticket T-1001/)
    assert.match(
      await part('model'),
      /model-scripted@1\.2\.0 attempt 1.*150 tok \(120 in, 30 out\) \$0\.0002.*calls\s*check_stock\(\{"item":"mugs"\}\)/,
    )
    const actions = await part('actions')
    assert.match(actions, /proposal\s*check_stock\(\{"item":"mugs"\}\)/)
    assert.match(actions, /policy decision allow by rule read-only \(policy-rules@2\.1\.0\+\w+\): matched rule read-only/)
    assert.match(
      (await page.textContent('[data-testid=detail-attempt][data-attempt="1"]')) ?? '',
      /attempt 1 tool_unavailable \(tool_transient\) after .*: the stock service did not answer \(first attempt\) — retried/,
    )
    const second = (await page.textContent('[data-testid=detail-attempt][data-attempt="2"]')) ?? ''
    assert.match(second, /attempt 2 ok in/)
    assert.match(second, /raw result\s*\{\s*"item": "mugs",\s*"inStock": 12\s*\}/)
    assert.match((await page.textContent('[data-testid=detail-observation]')) ?? '', /12 mugs in stock \[source: stock\/mugs\]/)
    assert.match(await part('verification'), /nothing verified in this step/)
    const state = await part('state')
    assert.match(state, /steps\s*0\s*→\s*1/)
    assert.match(state, /s1\.a1 check_stock: new → succeeded \(2 attempt\(s\)\)/)
    assert.match(state, /seq 12 observation: 12 mugs in stock/)
    await page.locator('#trace').screenshot({ path: join(shots, 'trace-3-step-retry.png') })
  })

  it('shows the step that waited for approval and the step with the verified answer', async () => {
    await page.click(row('s2.a1/approval'))
    await page.waitForSelector('[data-testid=trace-detail][data-step=s2]')
    assert.match(
      (await page.textContent('[data-testid=trace-detail] [data-testid=detail-policy]')) ?? '',
      /policy decision ask by rule followups-need-approval .*: a follow-up is visible to the customer; a person signs it off · approvers: \*/,
    )
    assert.match(
      (await page.textContent('[data-testid=detail-approval]')) ?? '',
      /approval approved by alice, scope once after waiting [\d.]+ (ms|s)/,
    )
    assert.match(
      (await page.textContent('[data-testid=trace-detail] [data-testid=detail-observation]')) ?? '',
      /Follow-up FU-1 recorded on T-1001/,
    )

    await page.click(row('s3'))
    await page.waitForSelector('[data-testid=trace-detail][data-step=s3]')
    const part = async (id: string) => (await page.textContent(`[data-testid=trace-detail] [data-testid=detail-${id}]`)) ?? ''
    assert.match(await part('model'), /final answer\s*The follow-up is recorded on the ticket \[source: T-1001\]\./)
    assert.match(await part('verification'), /answer checked\s*The follow-up is recorded.*result ok.*evidence.*"ref": "T-1001"/s)
    assert.match(await part('actions'), /no action in this step/)
    assert.deepEqual(
      await page.$$eval('[data-testid=context-messages] tbody tr', (rows) => rows.map((r) => r.querySelector('td')?.textContent?.trim())),
      [
        'not from the log',
        'seq 2 turn/start',
        'seq 6 step/model-response',
        'seq 12 tool/end',
        'seq 17 step/model-response',
        'seq 26 tool/end',
      ],
      'each message with the event it came from',
    )
    assert.match((await page.textContent('[data-testid=context-match]')) ?? '', /6 messages, .* matches the record/)
    const state = await part('state')
    assert.match(state, /stepSettled\s*false\s*→\s*true/, 'the answer was verified')
    assert.match(state, /stepDecision\s*tool_calls\s*→\s*final/)
    assert.match(state, /transcript gained\s*seq 31 assistant: The follow-up is recorded/)
    await page.locator('#trace').screenshot({ path: join(shots, 'trace-4-step-verified.png') })
    assert.ok(runId)
    assert.deepEqual(pageErrors, [])
  })
})

describe('the trace view shows hostile text as text', { skip: browserSkip }, () => {
  // A tool result (check_stock echoes the item) and the model's answer carrying markup and script.
  const item = '<img src=x onerror="window.__xss=1">'
  const answer = '<script>window.__xss=2</script><img src=y onerror="window.__xss=3"> done [source: stock/mugs]'
  let playground: Playground
  let browser: Browser
  let page: Page
  let pageErrors: string[] = []

  before(async () => {
    const script = [{ tool: 'check_stock', args: { item } }, { final: answer }]
    playground = await startPlayground({ preset: tracePresetCopy(0, 0, script), port: 0, onError: (e) => assert.fail(e as Error) })
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
  })

  it('draws a tool result and a final answer holding <img onerror> and <script> as text: no element made, no script run', async () => {
    const { runId } = await playground.app.agent('followup').run()
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready=true]')
    await page.click(`[data-testid=runs] tr[data-run="${runId}"]`)
    await page.waitForSelector('[data-testid=trace-timeline] .trace-row[data-span="s2"]')
    const detail = '[data-testid=trace-detail]'

    await page.click('[data-testid=trace-timeline] .trace-row[data-span="s1"]')
    await page.waitForSelector(`${detail}[data-step=s1] [data-testid=context-messages]`)
    const s1 = (await page.textContent(`${detail} [data-testid=detail-actions]`)) ?? ''
    assert.ok(s1.includes(`"item": "${item.replaceAll('"', '\\"')}"`), `the raw result shows the markup as text: ${s1}`)
    assert.ok(s1.includes(`12 ${item} in stock`), 'the observation too')
    assert.equal(await page.locator('#trace img, #trace script').count(), 0)

    await page.click('[data-testid=trace-timeline] .trace-row[data-span="s2"]')
    await page.waitForSelector(`${detail}[data-step=s2] [data-testid=context-messages]`)
    assert.ok(((await page.textContent(`${detail} [data-testid=detail-model]`)) ?? '').includes(answer), "the model's answer as text")
    assert.ok(((await page.textContent(`${detail} [data-testid=context-messages]`)) ?? '').includes(`12 ${item} in stock`))
    assert.equal(await page.locator('#trace img, #trace script').count(), 0, 'no element was made from the text')
    assert.equal(await page.locator('img[src=x], img[src=y]').count(), 0)
    assert.equal(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss), undefined, 'no script ran')
    assert.deepEqual(pageErrors, [])
    await page.locator('#trace').screenshot({ path: join(shots, 'trace-5-hostile-text.png') })
  })
})
