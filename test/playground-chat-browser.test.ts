/**
 * The playground's Threads view in real headless Chromium (Debian's, driven by playwright-core): start a
 * thread from the page, see the answer, send the next message, see two turns in order with their
 * statuses, and that the second turn's model saw the first (the echo model's answer lists the earlier
 * messages it was given, and the turn's events show the thread/history it was given). A turn that waits
 * for approval turns the message box off with the reason, links to the Run view where it is approved,
 * and the turn's end arrives live. A message that is markup shows as text. Preset:
 * test/playground-chat-preset.ts. Screenshots: tmp/playground-screenshots/chat-*.png.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startPlayground, type Playground } from '../playground/server.ts'
import { chatPresetCopy } from './playground-chat-preset.ts'
import { browserSkip, openPage, shots } from './playground-helpers.ts'

describe('the Threads (chat) view in headless Chromium', { skip: browserSkip }, () => {
  let playground: Playground
  let browser: Browser
  let page: Page
  const errors: unknown[] = []
  let pageErrors: string[] = []
  let preset: string

  before(async () => {
    // Each answer takes 300 ms: long enough that a turn is seen running before it ends.
    preset = chatPresetCopy(300)
    playground = await startPlayground({ preset, port: 0, onError: (e) => errors.push(e) })
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  const turn = (n: number) => `[data-testid=chat-turns] article[data-turn="${n}"]`
  const turns = () =>
    page.$$eval('[data-testid=chat-turns] article', (cards) =>
      cards.map((c) => ({
        turn: Number(c.getAttribute('data-turn')),
        status: c.getAttribute('data-status'),
        user: c.querySelector('[data-testid=chat-user]')?.textContent,
        answer: c.querySelector('[data-testid=chat-answer]')?.textContent,
      })),
    )
  const shot = (name: string) => page.locator('#threads').screenshot({ path: join(shots, name) })

  it('starts a thread from the page and shows the answer of turn 1', async () => {
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready=true]')
    assert.equal(await page.inputValue('[data-testid=chat-agent]'), 'chat')
    assert.match((await page.textContent('[data-testid=chat-unsupported]')) ?? '', /no threads for legacy/)
    await page.fill('[data-testid=chat-new-id]', 'ada-chat')
    await page.fill('[data-testid=chat-first]', 'my name is Ada')
    await page.click('[data-testid=chat-start]')
    await page.waitForSelector(`${turn(1)}[data-status=COMPLETED] [data-testid=chat-answer]`, { timeout: 60_000 })
    assert.equal(await page.textContent('[data-testid=chat-thread-id]'), 'ada-chat')
    assert.deepEqual(await turns(), [
      { turn: 1, status: 'COMPLETED', user: 'my name is Ada', answer: 'You said "my name is Ada". Earlier you said: nothing.' },
    ])
    await page.waitForSelector('[data-testid=chat-threads] li[data-thread=ada-chat]')
    assert.equal(await page.isEnabled('[data-testid=chat-send]'), true, 'the turn ended: the next message may go')
    await shot('chat-1-first-answer.png')
  })

  it('sends message 2: two turns in order, each with its status, and turn 2 saw turn 1', async () => {
    await page.fill('[data-testid=chat-input]', 'what is my name?')
    await page.click('[data-testid=chat-send]')
    await page.waitForSelector(`${turn(2)}[data-status=COMPLETED] [data-testid=chat-answer]`, { timeout: 60_000 })
    assert.deepEqual(await turns(), [
      { turn: 1, status: 'COMPLETED', user: 'my name is Ada', answer: 'You said "my name is Ada". Earlier you said: nothing.' },
      {
        turn: 2,
        status: 'COMPLETED',
        user: 'what is my name?',
        answer: 'You said "what is my name?". Earlier you said: "my name is Ada".',
      },
    ])
    assert.equal(await page.inputValue('[data-testid=chat-input]'), '', 'the box is emptied once the message is taken')
    // The turn's events, unfolded: followed live from run/start to run/end, with the history it was given.
    await page.click(`${turn(2)} details summary`)
    await page.waitForSelector(`${turn(2)} li[data-type="run/end"]`)
    const lines = await page.$$eval(`${turn(2)} ol.chat-events li`, (items) =>
      items.map((li) => ({ seq: Number(li.getAttribute('data-seq')), type: li.getAttribute('data-type')!, text: li.textContent! })),
    )
    assert.deepEqual(
      lines.map((l) => l.seq),
      lines.map((_, i) => i + 1),
      'every event once, in seq order',
    )
    const types = lines.map((l) => l.type)
    assert.equal(types[0], 'run/start')
    assert.equal(types.at(-1), 'run/end')
    const history = lines.find((l) => l.type === 'thread/history')
    assert.ok(history, `turn 2 shows the history it was given: ${types.join(', ')}`)
    assert.match(history.text, /1 earlier turn\(s\): you: my name is Ada \| answer: You said "my name is Ada"/)
    assert.ok(types.indexOf('thread/history') < types.indexOf('step/model-request'), 'given before the model was asked')
    await shot('chat-2-two-turns.png')
  })

  it('turns the box off while a turn waits for approval, with the reason and a way to approve; the end arrives live', async () => {
    await page.fill('[data-testid=chat-input]', 'please record that Ada called')
    await page.click('[data-testid=chat-send]')
    await page.waitForSelector(`${turn(3)}[data-status=WAITING_APPROVAL] [data-testid=chat-waiting]`, { timeout: 60_000 })
    assert.match((await page.textContent(`${turn(3)} [data-testid=chat-waiting]`)) ?? '', /waiting for approval: record_followup \(/)
    await page.waitForSelector('[data-testid=chat-composer][data-blocked=true]')
    assert.equal(await page.isDisabled('[data-testid=chat-send]'), true)
    assert.equal(await page.isDisabled('[data-testid=chat-input]'), true)
    assert.match(
      (await page.textContent('[data-testid=chat-blocked]')) ?? '',
      /^turn 3 is WAITING_APPROVAL: approve or reject its pending action \(Run view\) before the next message$/,
    )
    await shot('chat-3-waiting-approval.png')

    await page.click(`${turn(3)} [data-testid=chat-approve-link]`)
    await page.waitForSelector('[data-testid=pending]:not([hidden])')
    assert.equal(await page.textContent('[data-testid=run-id]'), await page.getAttribute(turn(3), 'data-run'))
    await page.fill('[data-testid=decide-by]', 'alice')
    await page.click('[data-testid=approve]')
    await page.waitForSelector(`${turn(3)}[data-status=COMPLETED] [data-testid=chat-answer]`, { timeout: 60_000 })
    await page.waitForSelector('[data-testid=chat-composer][data-blocked=false]')
    assert.equal(await page.isEnabled('[data-testid=chat-send]'), true)
    assert.deepEqual(
      (await turns()).map((t) => [t.turn, t.status]),
      [
        [1, 'COMPLETED'],
        [2, 'COMPLETED'],
        [3, 'COMPLETED'],
      ],
    )
  })

  it('shows a message that is markup as text: no element is made from it, nothing runs', async () => {
    const xss = '<img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>'
    await page.fill('[data-testid=chat-input]', xss)
    await page.click('[data-testid=chat-send]')
    await page.waitForSelector(`${turn(4)}[data-status=COMPLETED] [data-testid=chat-answer]`, { timeout: 60_000 })
    const four = (await turns())[3]
    assert.equal(four.user, xss)
    assert.match(four.answer ?? '', /^You said "<img src=x onerror=/)
    assert.equal(await page.$$eval('#chat-root img, #chat-root b', (nodes) => nodes.length), 0, 'no element from the message')
    // Its events too (run/start quotes the task).
    await page.click(`${turn(4)} details summary`)
    await page.waitForSelector(`${turn(4)} li[data-type="run/end"]`)
    assert.equal(await page.$$eval('#chat-root img, #chat-root b', (nodes) => nodes.length), 0)
    assert.deepEqual(pageErrors, [])
    // A thread id that is markup: refused by the API (the browser logs the 400), the refusal shown as text.
    await page.fill('[data-testid=chat-new-id]', '<b>x</b>')
    await page.fill('[data-testid=chat-first]', 'hi')
    await page.click('[data-testid=chat-start]')
    await page.waitForSelector('[data-testid=chat-start-error]:not([hidden])')
    assert.match((await page.textContent('[data-testid=chat-start-error]')) ?? '', /^\[invalid_input\] .*thread: a thread id is/)
    assert.equal(await page.$$eval('#chat-root img, #chat-root b', (nodes) => nodes.length), 0)
    assert.equal(await page.getAttribute('body', 'data-pwned'), null)
    await page.locator(turn(4)).scrollIntoViewIfNeeded()
    await shot('chat-4-markup-as-text.png')
    assert.deepEqual(pageErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)'])
  })

  it('read-only: shows the thread and its turns, with Start thread and Send off and the reason said', async () => {
    const viewer = await startPlayground({ preset, port: 0, readOnly: true, onError: (e) => errors.push(e) })
    try {
      await page.goto(viewer.url)
      await page.waitForSelector('body[data-ready=true]')
      await page.click('[data-testid=chat-threads] li[data-thread=ada-chat]')
      await page.waitForSelector(`${turn(4)}[data-status=COMPLETED]`)
      assert.equal((await turns()).length, 4)
      assert.equal(await page.isDisabled('[data-testid=chat-start]'), true)
      assert.equal(await page.isDisabled('[data-testid=chat-send]'), true)
      assert.match((await page.textContent('[data-testid=chat-blocked]')) ?? '', /^read-only playground \(--read-only\)/)
    } finally {
      await viewer.close()
    }
  })
})
