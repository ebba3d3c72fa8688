/**
 * What the page hides stays hidden, in real headless Chromium: the header's "read-only" badge shows only
 * in a playground started with --read-only (a class's `display` rule once overrode its `hidden`
 * attribute, so every playground said "read-only"), and no element with the `hidden` attribute is
 * rendered, in either mode. Screenshots: tmp/playground-screenshots/hidden-*.png.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startPlayground } from '../playground/server.ts'
import { browserSkip, defaultPresetCopy, openPage, shots } from './playground-helpers.ts'

describe('the playground hides what it marks hidden, in headless Chromium', { skip: browserSkip }, () => {
  let browser: Browser
  let page: Page
  let pageErrors: string[] = []
  const errors: unknown[] = []
  let preset: string

  before(async () => {
    preset = defaultPresetCopy()
    ;({ browser, page, pageErrors } = await openPage())
  })

  after(async () => {
    await browser?.close()
    assert.deepEqual(errors, [])
  })

  /** Elements that carry the `hidden` attribute and are rendered anyway (their id, or their tag and class). */
  const shownThoughHidden = () =>
    page.$$eval('[hidden]', (nodes) =>
      nodes
        .filter((n) => n.ownerDocument.defaultView!.getComputedStyle(n).display !== 'none')
        .map((n) => n.id || `${n.tagName.toLowerCase()}.${n.className}`),
    )

  for (const readOnly of [false, true]) {
    it(`${readOnly ? 'with' : 'without'} --read-only: the badge is ${readOnly ? 'shown' : 'not shown'}, and nothing hidden is rendered`, async () => {
      const playground = await startPlayground({ preset, port: 0, readOnly, onError: (e) => errors.push(e) })
      pageErrors.length = 0
      try {
        await page.goto(playground.url)
        await page.waitForSelector('body[data-ready=true]')
        assert.equal(await page.isVisible('[data-testid=read-only]'), readOnly)
        assert.equal(await page.isDisabled('[data-testid=start-button]'), readOnly)
        assert.deepEqual(await shownThoughHidden(), [])
        await page.locator('header').screenshot({ path: join(shots, `hidden-header-${readOnly ? 'read-only' : 'normal'}.png`) })
        assert.deepEqual(pageErrors, [])
      } finally {
        // Leave the page first: its live connections would fail as the server closes.
        await page.goto('about:blank')
        await playground.close()
      }
    })
  }
})
