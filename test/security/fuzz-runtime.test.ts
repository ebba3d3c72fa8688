/**
 * Issue 10, "Proof", the input paths that reach a running harness: tool arguments the model sends,
 * and HTTP bodies sent to the playground's API. Each generated input must end in a clear answer:
 * - tool arguments: the call runs (the arguments were fine) or ends in `tool/error` with
 *   `invalid_arguments` or the tool's own `tool_failed`, before any effect; never another code, never
 *   a crash of the run, never a hang;
 * - HTTP bodies: a 4xx with `{ error: { code, message } }` whose code is in core/contracts/errors.ts; never a
 *   500, never a hang, and nothing started when the body was wrong.
 * Generated deterministically (fixed seeds), so a failing case fails again the same way. Store rows
 * are fuzzed in test/security/fuzz-store.test.ts.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { z } from 'zod'
import { Codes, CordageError, defineTool, type Tool } from 'cordage'
import { startPlayground, type Playground } from '../../playground/server.ts'
import { defaultPresetCopy } from '../playground-helpers.ts'
import { invokeTool } from '../tool-harness.ts'

const counts: Record<string, number> = {}
after(() => {
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  console.log(
    `fuzz-runtime: ${Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}; total ${total}`,
  )
})

describe('fuzz: tool arguments from the model', () => {
  let effects = 0
  const order = defineTool({
    name: 'place_order',
    description: 'Place an order.',
    sideEffect: 'external',
    input: z
      .object({ sku: z.string().min(1).max(40), quantity: z.number().int().positive(), notes: z.array(z.string()).max(5).optional() })
      .strict(),
    run: ({ sku, quantity }) => {
      effects++
      return { output: { sku, quantity } }
    },
  })
  const loose = defineTool({
    name: 'forward',
    description: 'Forwards its arguments (a loose schema, like an MCP tool).',
    sideEffect: 'none',
    input: z.looseObject({}),
    run: (args) => ({ output: args }),
  })

  /** Arguments as a model adapter produces them: JSON text parsed, so `__proto__` is an own key. */
  const texts: string[] = [
    ...fc.sample(fc.json({ depthSize: 'medium' }), { seed: 10, numRuns: 120 }),
    ...fc.sample(
      fc.jsonValue().map((v) => JSON.stringify({ sku: v, quantity: v })),
      { seed: 11, numRuns: 40 },
    ),
    '{"__proto__":{"admin":true},"sku":"A","quantity":1}',
    '{"sku":"A","quantity":1,"constructor":{"prototype":{"x":1}}}',
    '{"sku":"\\ud800","quantity":1}',
    '{"sku":"A","quantity":1e400}',
    '{"sku":"A","quantity":-0}',
    JSON.stringify({ sku: 'A'.repeat(100_000), quantity: 1 }),
    '['.repeat(200) + ']'.repeat(200),
    '{"a":'.repeat(100) + '1' + '}'.repeat(100),
    '"just a string"',
    'null',
    '42',
    'true',
    '[]',
    '{}',
  ]

  it('ends every call in a result or a clear refusal, before any effect on a refusal', async () => {
    let refused = 0
    for (const [i, text] of texts.entries()) {
      for (const tool of [order, loose] as Tool[]) {
        const args = JSON.parse(text)
        const before = effects
        try {
          await invokeTool(tool, args, { runId: `run_fuzz_${i}_${tool.name}` })
        } catch (error) {
          assert.ok(CordageError.is(error), `case ${i} (${tool.name}): a plain ${(error as Error)?.name}: ${(error as Error)?.message}`)
          assert.ok(
            ['invalid_arguments', 'tool_failed'].includes(error.code),
            `case ${i} (${tool.name}) ${text.slice(0, 60)}: ${error.code} ${error.message}`,
          )
          assert.equal(effects, before, `case ${i}: a refused call had an effect`)
          assert.ok(
            error.message.length > 10 && !/\n\s+at /.test(error.message),
            `case ${i}: the message says what was wrong, without a stack`,
          )
          refused++
        }
      }
    }
    counts['tool arguments'] = texts.length * 2
    assert.ok(refused > 100, `most generated arguments are refused (${refused})`)
  })

  it('refuses a __proto__ key before policy sees it, and keeps constructor as data', async () => {
    await assert.rejects(invokeTool(loose, JSON.parse('{"__proto__":{"x":1}}')), {
      code: 'invalid_arguments',
      message: /"__proto__", which is refused/,
    })
    const kept = await invokeTool(loose, JSON.parse('{"constructor":{"prototype":1}}'))
    assert.deepEqual(kept.output, { constructor: { prototype: 1 } })
  })

  it('does not record an output JSON cannot carry, even when the tool gave its own observation', async () => {
    for (const observation of [undefined, 'ten']) {
      const big = defineTool({
        name: 'big_output',
        description: 'Returns a BigInt.',
        sideEffect: 'none',
        input: z.object({}),
        run: () => ({ output: { n: 10n } as never, ...(observation ? { observation } : {}) }),
      })
      await assert.rejects(invokeTool(big, {}), /the run ended FAILED \(internal_error\)/, `observation ${observation}`)
    }
  })
})

describe('fuzz: HTTP bodies sent to the playground', () => {
  let playground: Playground
  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: () => {} })
  })
  after(async () => {
    await playground.close()
  })

  const send = (path: string, body: string | Buffer, contentType = 'application/json') =>
    new Promise<{ status: number; text: string }>((done, fail) => {
      const req = request(
        new URL(path, playground.origin),
        {
          method: 'POST',
          headers: { authorization: `Bearer ${playground.token}`, 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = ''
          res
            .on('data', (c) => {
              text += c
            })
            .on('end', () => done({ status: res.statusCode ?? 0, text }))
        },
      )
      req.setTimeout(20_000, () => {
        req.destroy(new Error(`${path}: no answer within 20 s`))
      })
      req.on('error', fail)
      req.end(body)
    })

  const routes = ['/api/runs', '/api/runs/run_x/approve', '/api/runs/run_x/reject', '/api/agents/support/swap', '/api/compare']
  const bodies: (string | Buffer)[] = [
    ...fc.sample(fc.json(), { seed: 20, numRuns: 40 }),
    ...fc.sample(
      fc
        .record(
          { agent: fc.jsonValue(), task: fc.jsonValue(), plugin: fc.jsonValue(), by: fc.jsonValue(), runId: fc.jsonValue() },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      { seed: 21, numRuns: 20 },
    ),
    '',
    '{',
    '{"agent":',
    'not json',
    '\u0000\u0001',
    Buffer.from([0xff, 0xfe, 0x00]),
    '{"__proto__":{"agent":"support"}}',
    '{"agent":"support","extra":1}',
    '{"agent":"nobody"}',
    '{"agent":"support","task":""}',
    `{"agent":"${'a'.repeat(100_000)}"}`,
    '['.repeat(5000) + ']'.repeat(5000),
  ]

  it('answers every malformed body with a 4xx and a code, starts nothing, and never errs with a 500', async () => {
    const before = (
      await fetch(new URL('/api/runs', playground.origin), { headers: { authorization: `Bearer ${playground.token}` } }).then(
        (r) => r.json() as Promise<{ runs: unknown[] }>,
      )
    ).runs.length
    let cases = 0
    for (const route of routes) {
      for (const [i, body] of bodies.entries()) {
        const answer = await send(route, body)
        cases++
        // A body that happens to be a valid start (fast-check may produce { agent: "support" }) may start a run.
        if (answer.status === 200 || answer.status === 202) continue
        assert.ok(answer.status >= 400 && answer.status < 500, `${route} case ${i}: ${answer.status} ${answer.text.slice(0, 200)}`)
        const parsed = JSON.parse(answer.text) as { error?: { code?: string; message?: string } }
        assert.ok(parsed.error?.code && Object.hasOwn(Codes, parsed.error.code), `${route} case ${i}: code ${parsed.error?.code}`)
        assert.ok((parsed.error.message ?? '').length > 10, `${route} case ${i}: the message says what was wrong`)
      }
    }
    // And the same bodies as another content type: refused before they are read.
    for (const body of bodies.slice(0, 20)) {
      const answer = await send('/api/runs', body, 'text/plain')
      cases++
      assert.equal(answer.status, 415)
    }
    counts['HTTP bodies'] = cases
    const runs = (
      await fetch(new URL('/api/runs', playground.origin), { headers: { authorization: `Bearer ${playground.token}` } }).then(
        (r) => r.json() as Promise<{ runs: unknown[] }>,
      )
    ).runs
    assert.ok(runs.length >= before)
  })
})
