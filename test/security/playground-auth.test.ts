/**
 * The playground's API is for whoever started it, not for every process of the machine (issue 10,
 * finding 7). The attacker here is another local user or process: it can reach 127.0.0.1, but it did
 * not see the URL the playground printed, so it does not have the token.
 *
 * Real HTTP on a free port (node:http requests, so Host, Origin and Authorization are exactly what an
 * attacker would send) and, for what only a browser does, real headless Chromium:
 * - without the token, every API route (the five that change something, and the reads: runs hold task
 *   text, tool outputs, approvals) answers 401 `unauthorized` and changes nothing: after a swap to
 *   `default: allow`, the policy still asks, and a waiting run still waits;
 * - a wrong token of the same length, of another length, in the wrong place, or with the wrong scheme
 *   is refused alike;
 * - a foreign Host (DNS rebinding) and a foreign Origin are refused even with the token; a body that
 *   is not JSON (what a cross-origin form can send) is refused even with the token;
 * - the same swap with the token does go through (so the refusals above are what stopped it), and is
 *   recorded in the plugin events as `plugin/swapped` with who asked;
 * - `readOnly` refuses every route that changes something, even with the token;
 * - in Chromium: the page opened with the printed URL takes the token out of the address bar and works;
 *   opened without it, it shows no data and says how to get in; a page on another origin in the same
 *   browser cannot swap the policy by form or by fetch.
 */
import assert from 'node:assert/strict'
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { startPlayground, type Playground } from '../../playground/server.ts'
import { browserSkip, defaultPresetCopy, openPage, readSse } from '../playground-helpers.ts'

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  text: string
  body: any
}

/** One request with exactly these headers (fetch would set Host and refuse some others itself). */
function call(playground: Playground, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(
      `${playground.origin}${path}`,
      { method, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } },
      (res) => {
        let text = ''
        // A stream that was (wrongly) opened would never end: read its first chunk and stop.
        const sse = /^text\/event-stream/.test(res.headers['content-type'] ?? '')
        res.on('data', (chunk) => {
          text += chunk
          if (sse) req.destroy()
        })
        const finish = () => {
          let parsed: any
          try {
            parsed = JSON.parse(text)
          } catch {
            parsed = undefined
          }
          done({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed })
        }
        res.on('end', finish)
        res.on('close', finish)
      },
    )
    req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : fail(error)))
    req.end(body)
  })
}

const json = { 'content-type': 'application/json' }
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
/** The attacker's body: the followup agent's policy replaced by one that allows everything. */
const allowAll = JSON.stringify({ plugin: 'policy-rules', config: { default: 'allow' }, by: 'mallory' })

/** Start a followup run with the token and wait until it pauses or ends: the status says whether the policy still asks. */
async function runFollowup(playground: Playground): Promise<{ runId: string; status: string }> {
  const started = await call(
    playground,
    'POST',
    '/api/runs',
    { ...json, ...bearer(playground.token) },
    JSON.stringify({ agent: 'followup' }),
  )
  assert.equal(started.status, 202, started.text)
  const { runId } = started.body
  await readSse(
    `${playground.origin}/api/runs/${runId}/stream`,
    bearer(playground.token),
    (f) => f.data?.type === 'run/paused' || f.data?.type === 'run/end',
  )
  const state = await call(playground, 'GET', `/api/runs/${runId}`, bearer(playground.token))
  return { runId, status: state.body.status }
}

/** What an attacker could change, seen from the inside: runs, the waiting run, the plugins, the swaps recorded. */
async function snapshot(playground: Playground, waiting: string) {
  const auth = bearer(playground.token)
  const runs = (await call(playground, 'GET', '/api/runs', auth)).body.runs.map((r: any) => `${r.runId} ${r.status} ${r.lastSeq}`).sort()
  const run = (await call(playground, 'GET', `/api/runs/${waiting}`, auth)).body
  const swaps = (await call(playground, 'GET', '/api/plugin-events', auth)).body.events
    .filter((e: any) => e.type !== 'plugin/loaded' || e.id > 0)
    .map((e: any) => `${e.type} ${e.data.agent} ${e.data.name}`)
  return { runs, waiting: [run.status, run.pending?.actionId, run.lastSeq], plugins: playground.app.pluginsOf('followup'), swaps }
}

describe('playground: the token guards every API route', () => {
  let playground: Playground
  const errors: unknown[] = []
  let waiting: string

  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: (e) => errors.push(e) })
    // A run that waits for approval: what an attacker's approve or reject would aim at.
    const run = await runFollowup(playground)
    assert.equal(run.status, 'WAITING_APPROVAL')
    waiting = run.runId
  })
  after(async () => {
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  /** Every route: method, path, and a valid JSON body for the ones that change something. */
  const routes = (): [string, string, string?][] => [
    ['POST', '/api/runs', JSON.stringify({ agent: 'followup' })],
    ['POST', `/api/runs/${waiting}/approve`, JSON.stringify({ by: 'mallory' })],
    ['POST', `/api/runs/${waiting}/reject`, JSON.stringify({ by: 'mallory' })],
    ['POST', '/api/agents/followup/swap', allowAll],
    ['POST', '/api/compare', JSON.stringify({ runId: waiting, plugin: 'policy-rules', a: { version: '2.1.0' }, b: { version: '1.0.0' } })],
    ['GET', '/api/agents'],
    ['GET', '/api/runs'],
    ['GET', `/api/runs/${waiting}`],
    ['GET', `/api/runs/${waiting}/events`],
    ['GET', `/api/runs/${waiting}/stream`],
    ['GET', `/api/runs/${waiting}/trace`],
    ['GET', `/api/runs/${waiting}/steps/s1`],
    ['GET', `/api/runs/${waiting}/steps/s1/context`],
    ['GET', '/api/plugin-events'],
    ['GET', '/api/plugin-events/stream'],
    ['GET', '/api/no-such-route'],
    ['OPTIONS', '/api/agents/followup/swap'],
  ]

  const refused = (answer: Answer, label: string) => {
    assert.equal(answer.status, 401, `${label}: ${answer.text.slice(0, 200)}`)
    assert.equal(answer.body?.error?.code, 'unauthorized', label)
    assert.match(answer.body.error.message, /open the URL it printed \(http:\/\/127\.0\.0\.1:\d+\/\?token=…\)/, label)
    assert.ok(!answer.text.includes(playground.token), `${label}: the answer does not give the token away`)
    assert.match(String(answer.headers['www-authenticate']), /^Bearer/, label)
  }

  it('the token is 24 random bytes (base64url), new at each start, and the printed URL carries it', async () => {
    assert.match(playground.token, /^[A-Za-z0-9_-]{32}$/)
    assert.equal(playground.url, `${playground.origin}/?token=${playground.token}`)
    const other = await startPlayground({ preset: defaultPresetCopy(), port: 0 })
    try {
      assert.notEqual(other.token, playground.token)
      // One playground's token opens no other.
      assert.equal((await call(other, 'GET', '/api/agents', bearer(playground.token))).status, 401)
    } finally {
      await other.close()
    }
  })

  it('without the token, every route answers 401 unauthorized and says how to get in (reads too: runs hold task text, tool outputs, approvals)', async () => {
    for (const [method, path, body] of routes()) refused(await call(playground, method, path, body ? json : {}, body), `${method} ${path}`)
  })

  it('a wrong token of the same length, of another length, with another scheme or in the query of a non-stream route is refused alike', async () => {
    const t = playground.token
    const sameLength = (t[0] === 'A' ? 'B' : 'A') + t.slice(1)
    assert.equal(sameLength.length, t.length)
    const wrong: [string, Record<string, string>, string][] = [
      ['same length, one character off', bearer(sameLength), ''],
      ['the token with a character more', bearer(t + 'x'), ''],
      ['a prefix of the token', bearer(t.slice(0, 16)), ''],
      ['an empty bearer', { authorization: 'Bearer ' }, ''],
      ['another scheme', { authorization: `Basic ${t}` }, ''],
      ['the token as a bare header', { authorization: t }, ''],
      ['the token in the query of a route that is not a stream', {}, `?token=${t}`],
      ['a wrong header wins over a right query', bearer(sameLength), `?token=${t}`],
    ]
    for (const [label, headers, query] of wrong) {
      for (const [method, path, body] of routes()) {
        if (label.startsWith('the token in the query') && path.endsWith('/stream')) continue
        refused(
          await call(
            playground,
            method,
            path + (path.includes('?') ? query.replace('?', '&') : query),
            { ...(body ? json : {}), ...headers },
            body,
          ),
          `${label}: ${method} ${path}`,
        )
      }
    }
  })

  it('none of those refused requests changed anything: no run started, the waiting run still waits, the policy was not swapped and still asks', async () => {
    const before = await snapshot(playground, waiting)
    // The attacker's path once more, every way it could try.
    for (const headers of [{}, bearer('A'.repeat(playground.token.length)), bearer('nope')]) {
      for (const [method, path, body] of routes().filter(([m]) => m === 'POST'))
        await call(playground, method, path, { ...json, ...headers }, body)
    }
    assert.deepEqual(await snapshot(playground, waiting), before)
    assert.deepEqual(before.waiting.slice(0, 2), ['WAITING_APPROVAL', 's1.a1'])
    assert.ok(!before.swaps.some((s: string) => s.startsWith('plugin/disposed') || s.startsWith('plugin/swapped')), before.swaps.join('\n'))
    // The policy the agent runs still asks before a follow-up is recorded.
    assert.equal((await runFollowup(playground)).status, 'WAITING_APPROVAL')
  })

  it('with the token, the reads answer, and the stream routes also take ?token= (EventSource cannot send headers)', async () => {
    for (const [method, path] of routes().filter(([m, p]) => m === 'GET' && !p.endsWith('/stream') && !p.includes('no-such'))) {
      assert.equal((await call(playground, method, path, bearer(playground.token))).status, 200, path)
    }
    const frames = await readSse(
      `${playground.origin}/api/runs/${waiting}/stream?after=0&token=${playground.token}`,
      {},
      (f) => f.data?.seq === 11,
    )
    assert.equal(frames.length, 11)
    const plugin = await readSse(`${playground.origin}/api/plugin-events/stream?token=${playground.token}`, {}, () => true)
    assert.equal(plugin[0].event, 'plugin-event')
  })

  it('a foreign Host is refused even with the token (DNS rebinding), and so is the page', async () => {
    const auth = bearer(playground.token)
    for (const host of [
      'attacker.example',
      `attacker.example:${playground.port}`,
      `127.0.0.1:${playground.port + 1}`,
      `127.0.0.1.attacker.example:${playground.port}`,
      `localhost.:${playground.port}`,
    ]) {
      for (const [method, path] of [
        ['GET', '/api/agents'],
        ['GET', '/'],
        ['POST', '/api/agents/followup/swap'],
      ]) {
        const answer = await call(playground, method, path, { ...auth, ...json, host }, method === 'POST' ? allowAll : undefined)
        assert.equal(answer.status, 403, `${host} ${method} ${path}`)
        assert.equal(answer.body.error.code, 'invalid_input')
        assert.match(answer.body.error.message, /answers requests for 127\.0\.0\.1:\d+ or localhost:\d+ only/)
      }
    }
    assert.equal(
      (await call(playground, 'GET', '/api/agents', { ...auth, host: `localhost:${playground.port}` })).status,
      200,
      'localhost is this host too',
    )
  })

  it('a request from another origin is refused even with the token; this origin is let through', async () => {
    const auth = bearer(playground.token)
    for (const origin of [
      'http://attacker.example',
      `http://127.0.0.1:${playground.port + 1}`,
      `https://127.0.0.1:${playground.port}`,
      'null',
    ]) {
      const answer = await call(playground, 'POST', '/api/agents/followup/swap', { ...auth, ...json, origin }, allowAll)
      assert.equal(answer.status, 403, origin)
      assert.match(answer.body.error.message, /answers its own page only/)
      assert.equal((await call(playground, 'GET', '/api/agents', { ...auth, origin })).status, 403, origin)
    }
    for (const origin of [playground.origin, `http://localhost:${playground.port}`]) {
      assert.equal((await call(playground, 'GET', '/api/agents', { ...auth, origin })).status, 200, origin)
    }
  })

  it('a cross-origin form post (text/plain) is refused, and the JSON-only rule refuses it even with the token and no Origin', async () => {
    const before = await snapshot(playground, waiting)
    // What <form enctype="text/plain" method="post" action=".../swap"> on another site sends.
    const form = await call(
      playground,
      'POST',
      '/api/agents/followup/swap',
      { 'content-type': 'text/plain', origin: 'http://attacker.example' },
      `${allowAll.slice(0, -1)},"x":"=1"}`,
    )
    assert.equal(form.status, 403)
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      const answer = await call(
        playground,
        'POST',
        '/api/agents/followup/swap',
        { ...bearer(playground.token), ...(type ? { 'content-type': type } : {}) },
        allowAll,
      )
      assert.equal(answer.status, 415, type)
      assert.match(answer.body.error.message, /application\/json/)
    }
    assert.deepEqual(await snapshot(playground, waiting), before)
  })

  it('the page itself needs no token (it holds no data), and may not be framed or leak its address', async () => {
    for (const path of ['/', '/app.js', '/style.css']) {
      const page = await call(playground, 'GET', path)
      assert.equal(page.status, 200, path)
      assert.ok(!page.text.includes(playground.token), path)
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/)
      assert.equal(page.headers['x-frame-options'], 'DENY')
      assert.equal(page.headers['referrer-policy'], 'no-referrer')
    }
  })

  // Last: it changes the agent's policy.
  it('the same swap with the token goes through, is recorded as plugin/swapped with who asked, and then a run no longer pauses', async () => {
    const swap = await call(
      playground,
      'POST',
      '/api/agents/followup/swap',
      { ...json, ...bearer(playground.token) },
      JSON.stringify({ plugin: 'policy-rules', config: { default: 'allow' }, by: 'alice' }),
    )
    assert.equal(swap.status, 200, swap.text)
    assert.deepEqual(swap.body, { from: 'policy-rules@2.1.0', to: 'policy-rules@2.1.0', by: 'alice' })
    const events = (await call(playground, 'GET', '/api/plugin-events', bearer(playground.token))).body.events
    const recorded = events.filter((e: any) => e.type === 'plugin/swapped')
    assert.equal(recorded.length, 1, 'only the swap with the token is recorded: the refused ones never reached the host')
    assert.deepEqual(recorded[0].data, {
      agent: 'followup',
      name: 'policy-rules',
      version: '2.1.0',
      ok: true,
      from: 'policy-rules@2.1.0',
      to: 'policy-rules@2.1.0',
      by: 'alice',
      via: 'playground',
      config: { default: 'allow' },
    })
    assert.deepEqual(
      events.slice(-3).map((e: any) => e.type),
      ['plugin/disposed', 'plugin/loaded', 'plugin/swapped'],
      'right after the swap it reports',
    )
    // Without a by, the record says the playground asked.
    await call(
      playground,
      'POST',
      '/api/agents/followup/swap',
      { ...json, ...bearer(playground.token) },
      JSON.stringify({ plugin: 'policy-rules', config: { default: 'allow' } }),
    )
    const last = (await call(playground, 'GET', '/api/plugin-events?after=' + recorded[0].id, bearer(playground.token))).body.events.at(-1)
    assert.equal(last.type, 'plugin/swapped')
    assert.equal(last.data.by, 'playground')
    // This is what the refusals prevented: the policy now allows the follow-up without asking anyone.
    assert.equal((await runFollowup(playground)).status, 'COMPLETED')
  })
})

describe('playground: readOnly', () => {
  let playground: Playground

  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, readOnly: true })
  })
  after(async () => {
    await playground?.close()
  })

  it('answers the reads with the token, refuses every route that changes something with 403 even with the token, and 401 without it', async () => {
    const auth = bearer(playground.token)
    const agents = await call(playground, 'GET', '/api/agents', auth)
    assert.equal(agents.status, 200)
    assert.equal(agents.body.readOnly, true)
    assert.equal(playground.readOnly, true)
    const mutating: [string, string][] = [
      ['/api/runs', JSON.stringify({ agent: 'followup' })],
      ['/api/runs/run_x/approve', JSON.stringify({ by: 'alice' })],
      ['/api/runs/run_x/reject', JSON.stringify({ by: 'alice' })],
      ['/api/agents/followup/swap', allowAll],
      ['/api/compare', JSON.stringify({ runId: 'run_x', plugin: 'policy-rules', a: { version: '2.1.0' }, b: { version: '1.0.0' } })],
    ]
    for (const [path, body] of mutating) {
      const answer = await call(playground, 'POST', path, { ...json, ...auth }, body)
      assert.equal(answer.status, 403, path)
      assert.match(answer.body.error.message, /read-only \(started with --read-only\)/, path)
      assert.equal((await call(playground, 'POST', path, json, body)).status, 401, path)
    }
    assert.deepEqual((await call(playground, 'GET', '/api/runs', auth)).body.runs, [])
    assert.equal(
      (await call(playground, 'GET', '/api/plugin-events', auth)).body.events.filter((e: any) => e.type !== 'plugin/loaded').length,
      0,
    )
  })

  it('in Chromium, the page says read-only and its buttons that would change something are off', { skip: browserSkip }, async () => {
    const { browser, page, pageErrors } = await openPage()
    try {
      await page.goto(playground.url)
      await page.waitForSelector('body[data-ready=true]')
      assert.equal(await page.isVisible('[data-testid=read-only]'), true)
      for (const id of ['start-button', 'approve', 'reject', 'compare-button'])
        assert.equal(await page.isDisabled(`[data-testid=${id}]`), true, id)
      assert.deepEqual(pageErrors, [])
    } finally {
      await browser.close()
    }
  })
})

describe('playground: a token given by hand', () => {
  it('is used as given when it is long enough and URL-safe, and refused otherwise (before anything is loaded)', async () => {
    const token = 'a-given-token_0123456789'
    const playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, token })
    try {
      assert.equal(playground.url, `${playground.origin}/?token=${token}`)
      assert.equal((await call(playground, 'GET', '/api/agents', bearer(token))).status, 200)
    } finally {
      await playground.close()
    }
    for (const [bad, message] of [
      ['short', /at least 16 characters/],
      ['a token with spaces in it', /only letters, digits/],
      ['a&token=with&query=parts', /only letters, digits/],
    ] as const) {
      await assert.rejects(startPlayground({ preset: 'no/such/preset.yml', port: 0, token: bad }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_input')
        assert.match(error.message, message)
        assert.ok(!error.message.includes(bad), 'the message does not repeat the token')
        return true
      })
    }
  })
})

describe('playground in headless Chromium: the token in the page, and a page on another origin', { skip: browserSkip }, () => {
  let playground: Playground
  let attacker: Server
  let attackerOrigin: string
  const errors: unknown[] = []

  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: (e) => errors.push(e) })
    // Another local user's server: a page that tries to swap the policy by form post and by fetch.
    const target = `${playground.origin}/api/agents/followup/swap`
    const html = `<!doctype html><html><body>
      <form id="f" method="post" enctype="text/plain" action="${target}"><input name='{"plugin":"policy-rules","config":{"default":"allow"},"by":"mallory","x":"' value='"}'></form>
      <script>
        window.results = {}
        const body = ${JSON.stringify(allowAll)}
        window.attack = async () => {
          try { const r = await fetch('${target}', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body }); results.noCors = r.type } catch (e) { results.noCors = 'blocked' }
          try { const r = await fetch('${target}', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body }); results.json = r.status } catch (e) { results.json = 'blocked' }
          try { const r = await fetch('${playground.origin}/api/runs', { credentials: 'include' }); results.read = r.status + ' ' + (await r.text()) } catch (e) { results.read = 'blocked' }
          try { results.storage = localStorage.getItem('cordage-playground-token') } catch (e) { results.storage = 'error' }
        }
      </script></body></html>`
    attacker = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(html)
    })
    await new Promise<void>((done) => attacker.listen(0, '127.0.0.1', done))
    attackerOrigin = `http://127.0.0.1:${(attacker.address() as { port: number }).port}`
  })
  after(async () => {
    await new Promise((done) => attacker?.close(done))
    await playground?.close()
    assert.deepEqual(errors, [])
  })

  it('opened without the token, the page shows no data and says how to get in; with the printed URL it works and the token leaves the address bar', async () => {
    const { browser, page } = await openPage()
    try {
      await page.goto(`${playground.origin}/`)
      const locked = await page.waitForSelector('[data-testid=locked]')
      assert.match(
        (await locked.textContent()) ?? '',
        /no token.*Open the address `cordage playground` printed when it started: it ends in \?token=/,
      )
      assert.equal(await page.textContent('[data-testid=agents]'), 'loading…')
      assert.equal(await page.$$eval('[data-testid=runs] tr', (rows) => rows.length), 0)

      await page.goto(playground.url)
      await page.waitForSelector('body[data-ready=true]')
      assert.equal(page.url(), `${playground.origin}/`, 'the token is taken out of the address bar')
      assert.equal(await page.$('[data-testid=locked]'), null)
      assert.equal(await page.textContent('[data-testid=version-followup-policy-rules]'), '2.1.0')
      // A reload (no token in the address any more) still works: this origin's localStorage keeps it.
      await page.reload()
      await page.waitForSelector('body[data-ready=true]')
      assert.equal(await page.textContent('[data-testid=version-followup-policy-rules]'), '2.1.0')
      await page.waitForSelector('[data-testid=plugin-events] tr[data-type="plugin/loaded"]')

      // A token from an earlier start is refused, forgotten, and the page says so.
      await page.evaluate(() => (globalThis as any).localStorage.setItem('cordage-playground-token', 'an-old-token-from-another-start'))
      await page.reload()
      await page.waitForSelector('[data-testid=locked]')
      assert.match((await page.textContent('[data-testid=locked]')) ?? '', /does not accept/)
      assert.equal(await page.evaluate(() => (globalThis as any).localStorage.getItem('cordage-playground-token')), null)
    } finally {
      await browser.close()
    }
  })

  it('a page on another origin cannot swap the policy (form post or fetch) or read the runs, even in the browser that has the token', async () => {
    const { browser, page } = await openPage()
    try {
      // The victim's browser has the playground open (the token is in that origin's storage).
      await page.goto(playground.url)
      await page.waitForSelector('body[data-ready=true]')
      await page.goto(attackerOrigin)
      // From here on, every answer the playground gives this tab is to the other origin's requests.
      const statuses: number[] = []
      page.on('response', (response) => {
        if (response.url().startsWith(`${playground.origin}/api/`)) statuses.push(response.status())
      })
      await page.evaluate(() => (globalThis as any).attack())
      const results = await page.evaluate(() => (globalThis as any).results)
      assert.equal(results.noCors, 'opaque', 'a no-cors post leaves, but its answer is not readable')
      assert.equal(results.json, 'blocked', 'a JSON post needs a preflight, which is refused')
      assert.equal(results.read, 'blocked')
      assert.equal(results.storage, null, "the other origin cannot read the playground's storage")
      const [form] = await Promise.all([
        page.waitForNavigation(),
        page.evaluate(() => (globalThis as any).document.getElementById('f').submit()),
      ])
      assert.equal(form?.status(), 403)
      assert.match((await page.textContent('body')) ?? '', /answers its own page only/)
      assert.ok(statuses.length >= 2 && statuses.every((s) => s === 403 || s === 401), JSON.stringify(statuses))

      // Nothing was swapped, and the policy still asks.
      assert.equal(playground.feed.after(0).filter((e) => e.type === 'plugin/swapped' || e.type === 'plugin/disposed').length, 0)
      assert.equal((await runFollowup(playground)).status, 'WAITING_APPROVAL')
    } finally {
      await browser.close()
    }
  })
})
