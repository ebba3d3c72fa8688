/**
 * The eval report's HTML (core/eval/report.ts), read as a browser would not: bar heights against the
 * rates, the order of sensitivity points, failure-mix segments against the failures, escaping of
 * hostile text, no URL, the content-security policy, and no NaN or Infinity when there is nothing
 * to draw. The results are built from runs by test/eval-report-builder.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { exitCode } from '../core/cli/eval.ts'
import { latestReportPath, renderReport } from '../core/eval/report.ts'
import type { SuiteResult } from '../core/eval/result.ts'
import { run, suite, variant } from './eval-report-builder.ts'

/** The attributes of every element `tag` with class `cls` (the report writes attributes as name="value"). */
function elements(html: string, tag: string, cls: string): Record<string, string>[] {
  const out: Record<string, string>[] = []
  for (const match of html.matchAll(new RegExp(`<${tag}\\s([^>]*)>`, 'g'))) {
    const attrs = Object.fromEntries([...(match[1] as string).matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
    if ((attrs.class ?? '').split(' ').join(' ') === cls) out.push(attrs as Record<string, string>)
  }
  return out
}

const unescaped = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** Four cases on an ablation and a vary axis whose values arrive out of order. */
function ablationResult(): SuiteResult {
  const outcomes: Record<string, ('ok' | 'wrong-answer' | { status: 'FAILED' | 'STOPPED'; failureCode?: string })[]> = {
    full: ['ok', 'ok', 'ok', 'ok'],
    '-verifier': ['ok', 'wrong-answer', 'wrong-answer', 'ok'],
    'tools=200': ['ok', { status: 'FAILED', failureCode: 'tool_timeout' }, 'ok', 'ok'],
    'tools=20': ['ok', 'ok', 'ok', 'ok'],
    'maxSteps=10': ['ok', 'ok', 'ok', { status: 'STOPPED', failureCode: 'max_steps' }],
    'maxSteps=2': [
      { status: 'STOPPED', failureCode: 'max_steps' },
      { status: 'STOPPED', failureCode: 'max_steps' },
      { status: 'FAILED', failureCode: 'model_error' },
      'ok',
    ],
    'maxSteps=5': [{ status: 'FAILED' }, 'ok', 'ok', 'ok'],
  }
  const variants = [
    variant('full', 'full'),
    variant('-verifier', 'ablate', { mechanism: 'verifier' }),
    variant('tools=200', 'vary', { axis: 'tools', value: 200 }),
    variant('tools=20', 'vary', { axis: 'tools', value: 20 }),
    variant('maxSteps=10', 'vary', { axis: 'maxSteps', value: '10' }),
    variant('maxSteps=2', 'vary', { axis: 'maxSteps', value: 2 }),
    variant('maxSteps=5', 'vary', { axis: 'maxSteps', value: 5 }),
  ]
  const runs = Object.entries(outcomes).flatMap(([v, list]) => list.map((o, i) => run(`case-${i}`, v, o, { costUsd: 0.01 * (i + 1) })))
  // Completed with a right answer, yet an expectation failed (a write it should not have made):
  // verified success without a pass, so the two shares differ.
  Object.assign(runs.find((r) => r.variant === 'tools=20' && r.case === 'case-0')!, {
    ok: false,
    checks: [{ name: 'sideEffects.followups', ok: false, expected: '0', actual: '1' }],
  })
  return suite(variants, runs)
}

describe('eval report', () => {
  it('draws one success bar and one passed bar per variant, full first, with heights in proportion to the shares', () => {
    const result = ablationResult()
    const html = renderReport(result)
    const bars = elements(html, 'rect', 'bar success')
    assert.deepEqual(
      bars.map((b) => b['data-variant']),
      ['full', '-verifier', 'tools=200', 'tools=20', 'maxSteps=10', 'maxSteps=2', 'maxSteps=5'],
    )
    const rate = (id: string) => result.summaries.find((s) => s.variant === id)!.verifiedSuccessRate
    const full = bars[0]!
    assert.ok(Number(full.height) > 0)
    for (const bar of bars) {
      const expected = (Number(full.height) * rate(bar['data-variant']!)) / rate('full')
      assert.ok(Math.abs(Number(bar.height) - expected) < 0.02, `${bar['data-variant']}: height ${bar.height}, expected ${expected}`)
    }
    assert.equal(Number(bars[1]!.height) * 2, Number(full.height), 'two of four verified without the verifier')
    assert.equal(elements(html, 'rect', 'bar cost').length, 7)
    // The share of cases passed, beside it, on the same axis: full passed 4 of 4.
    const passed = elements(html, 'rect', 'bar passed')
    assert.equal(passed.length, 7)
    for (const bar of passed) {
      const s = result.summaries.find((x) => x.variant === bar['data-variant'])!
      const expected = (Number(full.height) * s.passed) / s.cases
      assert.ok(Math.abs(Number(bar.height) - expected) < 0.02, `${bar['data-variant']} passed: height ${bar.height}, expected ${expected}`)
    }
    assert.ok(html.includes('>3/4</text>'), 'tools=20 says 3/4 above its bar')
    const tools20 = (cls: string) => Number(elements(html, 'rect', cls).find((b) => b['data-variant'] === 'tools=20')!.height)
    assert.equal(tools20('bar success'), Number(full.height), 'tools=20 verified all four')
    assert.ok(tools20('bar passed') < tools20('bar success'), 'but passed three')
  })

  it('orders sensitivity points by numeric value per axis, not as given or as text', () => {
    const html = renderReport(ablationResult())
    const points = elements(html, 'circle', 'point success')
    const axis = (name: string) => points.filter((p) => p['data-axis'] === name)
    assert.deepEqual(
      axis('maxSteps').map((p) => p['data-value']),
      ['2', '5', '10'],
    )
    assert.deepEqual(
      axis('tools').map((p) => p['data-value']),
      ['20', '200'],
    )
    const xs = axis('maxSteps').map((p) => Number(p.cx))
    assert.ok(xs[0]! < xs[1]! && xs[1]! < xs[2]!, `x grows with the value: ${xs}`)
    // maxSteps=2 verified 1 of 4, maxSteps=5 and =10 3 of 4: the first point sits lower (a larger y).
    const ys = axis('maxSteps').map((p) => Number(p.cy))
    assert.ok(ys[0]! > ys[1]! && ys[1] === ys[2])
    assert.match(html, /full harness: 100%/)
  })

  it('stacks the failure mix so that the segments of each variant add up to its failures', () => {
    const result = ablationResult()
    const html = renderReport(result)
    const segments = elements(html, 'rect', 'segment')
    const width = (id: string) => segments.filter((s) => s['data-variant'] === id).reduce((sum, s) => sum + Number(s.width), 0)
    for (const summary of result.summaries) {
      const mine = segments.filter((s) => s['data-variant'] === summary.variant)
      const failures = Object.values(summary.failureMix).reduce((a, b) => a + b, 0)
      assert.equal(
        mine.reduce((sum, s) => sum + Number(s['data-count']), 0),
        failures,
        summary.variant,
      )
      assert.deepEqual(mine.map((s) => s['data-code']).sort(), Object.keys(summary.failureMix).sort())
    }
    // maxSteps=2 has three failures, tools=200 one: three times as long.
    assert.ok(Math.abs(width('maxSteps=2') - 3 * width('tools=200')) < 0.05)
    // One colour per code, the same in every bar.
    const colour = new Map<string, string>()
    for (const s of segments) {
      const seen = colour.get(s['data-code']!)
      if (seen) assert.equal(s.fill, seen, s['data-code'])
      colour.set(s['data-code']!, s.fill!)
    }
    assert.equal(new Set(colour.values()).size, colour.size, 'different codes, different colours')
    assert.deepEqual([...colour.keys()].sort(), ['FAILED', 'max_steps', 'model_error', 'tool_timeout'])
  })

  it('shows the hostile text of a result only escaped', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '"><img src=x onerror=alert(2)>',
      '</svg><svg onload=alert(3)>',
      "' onmouseover='alert(4)",
    ]
    const [a, b, c, d] = hostile as [string, string, string, string]
    const variants = [variant('full', 'full'), variant(b, 'vary', { axis: c, value: a, label: d }), variant(c, 'ablate', { label: a })]
    const runs = [
      run(a, 'full', 'ok'),
      run(a, b, { status: 'FAILED', failureCode: c }, { answer: d, checks: [{ name: a, ok: false, expected: b, actual: c }] }),
      run(b, c, { error: a }, { file: d }),
    ]
    const result = suite(variants, runs, { suite: a })
    result.baseline = {
      file: b,
      regressions: [{ case: a, variant: b, was: c, now: d }],
      fixed: [{ case: c, variant: a }],
      added: [b],
      removed: [c],
      metrics: [],
    }
    result.summaries[1]!.changed = [a, b]
    const html = renderReport(result)
    // Escaped text holds no '<', so every '<' opens a tag the report wrote: check them all.
    const tags = [...html.matchAll(/<\/?([a-zA-Z][\w-]*)((?:\s+[\w:-]+(?:="[^"]*")?)*)\s*\/?>/g)]
    assert.equal(tags.length, html.replace(/^<!doctype html>/, '').split('<').length - 1, 'every < starts a well-formed tag')
    const names = new Set(tags.map((t) => (t[1] as string).toLowerCase()))
    for (const name of ['script', 'img', 'iframe', 'object', 'embed']) assert.ok(!names.has(name), `no <${name}>`)
    const attributes = tags.flatMap((t) => [...(t[2] as string).matchAll(/\s+([\w:-]+)(?:="[^"]*")?/g)].map((m) => m[1] as string))
    assert.deepEqual(
      attributes.filter((a) => /^on/i.test(a)),
      [],
      'no event handler attribute',
    )
    assert.equal(html.match(/<\/svg>/g)?.length, html.match(/<svg[\s>]/g)?.length, 'every svg closed is one the report opened')
    // Each one is there, escaped, and reads back as it was.
    for (const text of hostile) assert.ok(unescaped(html).includes(text), `${text} is shown`)
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'))
    assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;'))
  })

  it('names no URL, loads nothing, and carries a strict content-security policy', () => {
    const html = renderReport(ablationResult())
    assert.doesNotMatch(html, /https?:\/\//i)
    assert.doesNotMatch(html, /<(script|link rel="stylesheet"|iframe|object|embed)/i)
    assert.doesNotMatch(html, /\b(src|href)="(?!data:)/i, 'every src and href is a data: URL')
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1]
    assert.ok(csp, 'a CSP meta tag')
    const policy = unescaped(csp)
    assert.match(policy, /default-src 'none'/)
    assert.match(policy, /style-src 'unsafe-inline'/)
    assert.match(policy, /img-src data:/)
    assert.doesNotMatch(policy, /script-src/)
  })

  it('shows the baseline when there is one, and the header figures', () => {
    const result = ablationResult()
    assert.doesNotMatch(renderReport(result), /id="baseline"/)
    result.baseline = {
      file: 'last.json',
      regressions: [{ case: 'case-1', variant: '-verifier', was: 'passed', now: 'answer.includes failed' }],
      fixed: [],
      added: ['case-9'],
      removed: [],
      metrics: [{ variant: 'full', field: 'costUsd', was: 0.5, now: 0.1 }],
    }
    const html = renderReport(result)
    assert.match(html, /id="baseline"/)
    assert.match(html, /1 regression\(s\), 0 fixed, 1 added, 0 removed/)
    assert.match(html, /<td>\$0\.50<\/td><td>\$0\.10<\/td>/)
    // 4 + 2 + 3 + 3 + 3 + 1 + 3 of 28 case runs passed; the 9 that did not are all of ablated or varied variants.
    assert.match(html, /data-testid="overall">19 of 28 case run\(s\)/)
    assert.match(html, /data-testid="measured">9 case run\(s\) of ablated or varied variants did not meet the expectations/)
  })

  it('is red only for what makes the command fail: misses of ablated and varied variants are measured, not failed', () => {
    const red = (html: string) => [...html.matchAll(/class="(?:badge|cell) bad"[^>]*>([^<]*)</g)].map((m) => m[1])
    const failures = (html: string, cls: string) => elements(html, 'article', cls).map((a) => `${a['data-case']} ${a['data-variant']}`)

    // The full harness holds; -verifier and the varied variants miss 9 case runs, as ablations are expected to.
    const measured = ablationResult()
    assert.equal(exitCode(measured, false), 0)
    let html = renderReport(measured)
    assert.deepEqual(red(html), [], 'nothing red when the command exits 0')
    assert.match(html, /<span class="badge ok" data-testid="verdict">every expectation of the gated variants held<\/span>/)
    assert.match(html, /<span class="badge measured" data-testid="measured">9 case run\(s\) of ablated or varied variants/)
    assert.equal(elements(html, 'span', 'cell measured').length, 9)
    assert.deepEqual(failures(html, 'failure'), [])
    assert.equal(failures(html, 'failure measured').length, 9)
    assert.match(html, /<h3>What the ablations and variations changed \(9\)<\/h3>/)
    assert.doesNotMatch(html, /What failed/)

    // A miss of the full harness fails the command: that one is red, the measured ones stay as they were.
    const gated = ablationResult()
    const missed = gated.runs.find((r) => r.variant === 'full' && r.case === 'case-2')!
    Object.assign(missed, { ok: false, checks: [{ name: 'answer.includes', ok: false, expected: 'x', actual: 'y' }] })
    assert.equal(exitCode(gated, false), 1)
    html = renderReport(gated)
    assert.deepEqual(red(html), ['1 case run(s) failed', '✗ fail'])
    assert.deepEqual(failures(html, 'failure'), ['case-2 full'])
    assert.match(html, /<h3>What failed \(1\)<\/h3>/)

    // A case that could not run fails the command in any variant: red there too.
    const errored = ablationResult()
    Object.assign(errored.runs.find((r) => r.variant === 'maxSteps=2' && r.case === 'case-3')!, {
      ok: false,
      error: { code: 'preset_invalid', message: 'bad' },
    })
    assert.equal(exitCode(errored, false), 1)
    html = renderReport(errored)
    assert.deepEqual(red(html), ['1 case run(s) failed', '⚠ error'])
    assert.deepEqual(failures(html, 'failure'), ['case-3 maxSteps=2'])
  })

  it('draws nothing broken with no variants, or with variants but no case', () => {
    const none = suite([], [])
    const noCase = suite([variant('full', 'full'), variant('maxSteps=1', 'vary', { axis: 'maxSteps', value: 1 })], [])
    const malformed = suite([variant('full', 'full')], [run('a', 'full', 'ok')])
    Object.assign(malformed.summaries[0]!, { verifiedSuccessRate: Number.NaN, costUsd: Number.POSITIVE_INFINITY })
    malformed.durationMs = Number.NaN
    for (const result of [none, noCase, malformed]) {
      const html = renderReport(result)
      assert.doesNotMatch(html, /NaN|Infinity|undefined/, result.summaries.map((s) => s.variant).join())
      assert.match(html, /<\/html>\n$/)
    }
    assert.match(renderReport(none), /No variant ran/)
    assert.match(renderReport(noCase), /No case ran/)
    assert.equal(elements(renderReport(noCase), 'rect', 'bar success').length, 2)
  })

  it('keeps the latest report under .cordage/eval in the working directory', () => {
    assert.equal(latestReportPath('/home/me/project'), '/home/me/project/.cordage/eval/latest.html')
  })
})
