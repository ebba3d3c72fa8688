/**
 * core/eval/expect.ts and core/eval/records.ts: a case's expectations checked against real runs of the
 * support desk (a real app from a preset, the scripted model, the outbox the tool writes), and side
 * effects counted from the tool's own JSON-lines record.
 */
import assert from 'node:assert/strict'
import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { Expect } from '../../core/eval/case.ts'
import { checkExpectations, validateExpect, type Observed } from '../../core/eval/expect.ts'
import { countRecords } from '../../core/eval/records.ts'
import type { Check } from '../../core/eval/result.ts'
import { refundAnswer, supportDesk, tempDir, type Harness } from '../helpers.ts'

/** What a run did, read from its events and the outbox, the way an eval sees it. */
function observe(events: RunEvent[], outbox: string): Observed {
  const end = events.findLast((e) => e.type === 'run/end')
  const paused = events.findLast((e) => e.type === 'run/paused')
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
  for (const e of events) {
    if (e.type !== 'step/model-response') continue
    usage.inputTokens += e.data.usage.inputTokens
    usage.outputTokens += e.data.usage.outputTokens
    usage.costUsd += e.data.usage.costUsd
  }
  const followups = countRecords(outbox, 'ticketId')
  return {
    status: end?.type === 'run/end' ? end.data.status : paused?.type === 'run/paused' ? paused.data.status : 'RUNNING',
    failureCode: end?.type === 'run/end' ? end.data.failureCode : undefined,
    answer: end?.type === 'run/end' ? end.data.answer : undefined,
    steps: events.filter((e) => e.type === 'step/start').length,
    tokens: usage.inputTokens + usage.outputTokens,
    costUsd: usage.costUsd,
    events,
    sideEffects: { followups: followups.count },
    duplicates: { followups: followups.duplicates },
  }
}

// Every case states a status (required); the checks under test are the others.
const expect = (shape: unknown) => Expect.parse({ status: 'COMPLETED', ...(shape as object) })
const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c]))

describe('countRecords', () => {
  it('counts nothing in a file the tool never wrote', () => {
    assert.deepEqual(countRecords(join(tempDir(), 'none.jsonl')), { count: 0, duplicates: 0 })
  })

  it('counts records sharing a key (a dotted path) as duplicates, and identical lines without a key', () => {
    const file = join(tempDir(), 'out.jsonl')
    writeFileSync(
      file,
      [
        { id: 'a', t: { n: 1 }, at: 1 },
        { id: 'b', t: { n: 2 }, at: 2 },
        { id: 'a', t: { n: 1 }, at: 3 },
        { id: 'a', t: { n: 3 }, at: 3 },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n\n',
    )
    assert.deepEqual(countRecords(file, 'id'), { count: 4, duplicates: 2 })
    assert.deepEqual(countRecords(file, 't.n'), { count: 4, duplicates: 1 })
    assert.deepEqual(countRecords(file), { count: 4, duplicates: 0 })
    appendFileSync(file, `${JSON.stringify({ id: 'b', t: { n: 2 }, at: 2 })}\n`)
    assert.deepEqual(countRecords(file), { count: 5, duplicates: 1 })
    // 1 and "1" are different values, not the same effect.
    const mixed = join(tempDir(), 'mixed.jsonl')
    writeFileSync(mixed, '{"id":1}\n{"id":"1"}\n')
    assert.deepEqual(countRecords(mixed, 'id'), { count: 2, duplicates: 0 })
    // The same record written with its keys in another order, or other spacing, is the same effect.
    const reordered = join(tempDir(), 'reordered.jsonl')
    writeFileSync(reordered, '{"id":{"a":1,"b":2},"n":1}\n{ "n": 1, "id": { "b": 2, "a": 1 } }\n')
    assert.deepEqual(countRecords(reordered), { count: 2, duplicates: 1 })
    assert.deepEqual(countRecords(reordered, 'id'), { count: 2, duplicates: 1 })
  })

  it('fails closed on a line that is not JSON, or a record without the key, naming the file and line', () => {
    const file = join(tempDir(), 'out.jsonl')
    writeFileSync(file, '{"id":"a"}\n{"id":"b"\n')
    assert.throws(
      () => countRecords(file, 'id'),
      (error: Error & { code: string }) => {
        assert.equal(error.code, 'invalid_input')
        assert.match(error.message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line 2: not JSON`))
        return true
      },
    )
    writeFileSync(file, '{"id":"a"}\n{"ticket":"b"}\n')
    assert.throws(() => countRecords(file, 'id'), /line 2: the record has no "id"/)
    assert.throws(() => countRecords(file, 'id.x'), /line 1: the record has no "id.x"/)
    // A lone surrogate has no canonical form: refused, with its line, rather than compared as something else.
    writeFileSync(file, '{"id":"a"}\n{"id":"\\ud800"}\n')
    assert.throws(() => countRecords(file, 'id'), /line 2: the value has no canonical JSON form/)
  })
})

describe('validateExpect', () => {
  it('accepts expectations that can be checked', () => {
    const ok = expect({
      status: 'COMPLETED',
      answer: { includes: ['30 days'], matches: '\\[source: [^\\]]+\\]' },
      events: {
        includes: ['verify/end', 'tool/end[lookup_policy]'],
        excludes: ['tool/start[record_followup]'],
        order: ['tool/approval-decided[record_followup] < tool/start[record_followup]'],
      },
      steps: { min: 1, max: 3 },
      sideEffects: { followups: 0 },
    })
    assert.deepEqual(validateExpect(ok), [])
  })

  it('refuses what could never fail or never hold: a typo in an event type, a tool on a non-tool event, A < A, {} and min > max', () => {
    const problems = validateExpect(
      expect({
        events: {
          includes: ['tool/started[record_followup]', 'verify/end'],
          excludes: ['run/start[lookup_policy]', 'nonsense'],
          order: ['tool/end < tool/end', 'step/strat < run/end'],
        },
        steps: {},
        tokens: { min: 5, max: 2 },
        duplicates: { followups: {} },
      }),
    )
    assert.deepEqual(problems, [
      'expect.events.includes[0]: "tool/started" is not a run event type (tool/ events are tool/proposed, tool/decision, tool/approval-requested, tool/approval-decided, tool/start, tool/end, tool/error, tool/reconciled)',
      'expect.events.excludes[0]: "run/start[lookup_policy]" names a tool, but run/start is not a tool event; only tool/ events can be narrowed to one tool',
      'expect.events.excludes[1]: "nonsense" is not an event selector; write TYPE, TYPE[tool] or TYPE[tool]:code, such as tool/start[record_followup] or tool/error:tool_timeout',
      'expect.events.order[0]: "tool/end < tool/end" orders an event before itself, which can never hold',
      'expect.events.order[1]: "step/strat" is not a run event type (step/ events are step/start, step/context, step/model-request, step/model-error, step/model-response, step/end, step/no-progress)',
      'expect.steps: {} sets no limit, so it can never fail; give min, max or a number',
      'expect.tokens: min 5 is above max 2, so it can never hold',
      'expect.duplicates.followups: {} sets no limit, so it can never fail; give min, max or a number',
    ])
  })

  it('refuses an answer pattern the linear-time engine cannot run, and empty lists', () => {
    const problems = validateExpect(expect({ answer: { matches: '(?<=source: )policy', includes: [] }, events: { order: [] } }))
    assert.equal(problems.length, 3, problems.join('\n'))
    assert.match(problems[0], /^expect\.answer\.matches: \/\(\?<=source: \)policy\/ is not a valid regular expression: .*lookbehind/)
    assert.equal(problems[1], 'expect.answer.includes: an empty list checks nothing; remove it or name what to check')
    assert.equal(problems[2], 'expect.events.order: an empty list checks nothing; remove it or name what to check')
  })
})

describe('checkExpectations on a read-only run', () => {
  let harness: Harness
  let seen: Observed
  before(async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }],
      model: { usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.0002 } },
    })
    const state = await harness.agent.run('What is the refund window for damaged items?')
    seen = observe(await harness.events(state.runId), harness.outboxFile)
  })
  after(() => harness.stop())

  it('counts the events a selector matches, narrowed by tool and by failure code', () => {
    const checks = byName(
      checkExpectations(
        expect({
          events: {
            count: {
              'tool/start[lookup_policy]': 1,
              'step/model-response': { min: 2, max: 2 },
              'tool/error': 0,
              'verify/end:missing_evidence': 0,
              'tool/start[record_followup]': { min: 1 },
            },
          },
        }),
        seen,
      ),
    )
    assert.equal(checks['events.count[tool/start[lookup_policy]]'].ok, true)
    assert.equal(checks['events.count[step/model-response]'].ok, true)
    assert.equal(checks['events.count[tool/error]'].ok, true)
    assert.equal(checks['events.count[verify/end:missing_evidence]'].ok, true)
    assert.deepEqual(
      [checks['events.count[tool/start[record_followup]]'].ok, checks['events.count[tool/start[record_followup]]'].actual],
      [false, '0'],
    )
    assert.deepEqual(validateExpect(expect({ events: { count: { 'tool/error:tool_timed_out': 1 } } })), [
      'expect.events.count["tool/error:tool_timed_out"]: "tool_timed_out" is not an error code (did you mean tool_timeout?); docs/reference/errors.md lists them',
    ])
  })

  it('holds every expectation the run meets, with what was seen', () => {
    const checks = checkExpectations(
      expect({
        status: 'COMPLETED',
        answer: { includes: ['30 days', '[source: policy/refunds#2]'], excludes: ['60 days'], matches: '\\[source: policy/[a-z]+#\\d\\]' },
        sideEffects: { followups: 0 },
        duplicates: { followups: 0 },
        events: {
          includes: ['tool/end[lookup_policy]', 'verify/end'],
          excludes: ['tool/start[record_followup]', 'tool/error'],
          order: ['tool/end[lookup_policy] < verify/start'],
        },
        steps: 2,
        tokens: { min: 240, max: 240 },
        costUsd: 0.0004,
      }),
      seen,
    )
    assert.deepEqual(
      checks.filter((c) => !c.ok),
      [],
    )
    assert.deepEqual(
      checks.map((c) => c.name),
      [
        'status',
        'answer.includes',
        'answer.excludes',
        'answer.matches',
        'sideEffects.followups',
        'duplicates.followups',
        'events.includes',
        'events.excludes',
        'events.order[0]',
        'steps',
        'tokens',
        'costUsd',
      ],
    )
    const c = byName(checks)
    assert.deepEqual([c.steps.expected, c.steps.actual], ['2', '2'])
    assert.deepEqual([c.tokens.expected, c.tokens.actual], ['240 to 240', '240'])
    // 0.0002 + 0.0002 is shown as people write it, and equals 0.0004 despite the float sum.
    assert.deepEqual([c.costUsd.expected, c.costUsd.actual], ['0.0004', '0.0004'])
    assert.match(c['events.order[0]'].actual, /^tool\/end\[lookup_policy\] at seq \d+, verify\/start at seq \d+$/)
  })

  it('fails each expectation the run does not meet, saying what it saw', () => {
    const c = byName(
      checkExpectations(
        expect({
          status: 'WAITING_APPROVAL',
          failureCode: 'missing_evidence',
          answer: { includes: ['30 days', '14 days'], excludes: ['photo', 'delivery'], matches: '\\[file: ' },
          sideEffects: { followups: { min: 1 }, outbox: 0 },
          events: {
            includes: ['tool/end[record_followup]', 'verify/end', 'tool/decision[record_followup]'],
            excludes: ['verify/end', 'tool/start[lookup_policy]'],
            order: ['verify/start < tool/end[lookup_policy]', 'tool/start[record_followup] < run/end', 'run/start < tool/error'],
          },
          steps: { max: 1 },
          tokens: 239,
          costUsd: { min: 0.001 },
        }),
        seen,
      ),
    )
    assert.ok(
      Object.values(c).every((check) => !check.ok),
      JSON.stringify(Object.values(c).filter((check) => check.ok)),
    )
    assert.deepEqual([c.status.expected, c.status.actual], ['WAITING_APPROVAL', 'COMPLETED'])
    assert.deepEqual([c.failureCode.expected, c.failureCode.actual], ['missing_evidence', 'none'])
    assert.match(c['answer.includes'].actual, /^lacks "14 days": "Damaged items/)
    assert.match(c['answer.excludes'].actual, /^contains "delivery": /)
    assert.match(c['answer.matches'].actual, /^does not match: /)
    assert.deepEqual([c['sideEffects.followups'].expected, c['sideEffects.followups'].actual], ['at least 1', '0'])
    assert.equal(c['sideEffects.outbox'].actual, 'no record named "outbox" was counted')
    // lookup_policy's tool/decision is not record_followup's: a decision is narrowed through its action's tool.
    assert.equal(c['events.includes'].actual, 'no tool/end[record_followup], tool/decision[record_followup]')
    assert.match(c['events.excludes'].actual, /^verify\/end at seq \d+, tool\/start\[lookup_policy\] at seq \d+$/)
    assert.match(c['events.order[0]'].actual, /^verify\/start at seq \d+, tool\/end\[lookup_policy\] at seq \d+$/)
    assert.match(c['events.order[1]'].actual, /^no tool\/start\[record_followup\], run\/end at seq \d+$/)
    assert.match(c['events.order[2]'].actual, /^run\/start at seq 1, no tool\/error$/)
    assert.deepEqual([c.steps.expected, c.tokens.expected, c.costUsd.expected], ['at most 1', '239', 'at least 0.001'])
  })

  it('fails, never passes, a selector validateExpect would refuse, when checked without it', () => {
    const c = byName(checkExpectations(expect({ events: { excludes: ['tool/started[record_followup]'], includes: ['nonsense'] } }), seen))
    assert.equal(c['events.excludes'].ok, false)
    assert.match(c['events.excludes'].actual, /^selector: "tool\/started" is not a run event type/)
    assert.deepEqual([c['events.includes'].ok, c['events.includes'].actual], [false, 'no nonsense'])
  })
})

describe('checkExpectations on a write that needs approval', () => {
  let harness: Harness
  let paused: Observed
  let approved: Observed
  before(async () => {
    harness = await supportDesk({
      script: [
        { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved' } },
        { final: 'Follow-up FU-1 recorded on T-1001 [source: FU-1].' },
      ],
    })
    const state = await harness.agent.run('Note the refund on T-1001')
    paused = observe(await harness.events(state.runId), harness.outboxFile)
    await (await harness.agent.approve(state.runId, 's1.a1', { by: 'eval' })).done
    approved = observe(await harness.events(state.runId), harness.outboxFile)
  })
  after(() => harness.stop())

  const shape = expect({
    status: 'WAITING_APPROVAL',
    sideEffects: { followups: 0 },
    events: {
      // tool/decision carries no tool name: it is found through its action's tool/proposed.
      includes: ['tool/decision[record_followup]', 'tool/approval-requested[record_followup]'],
      excludes: ['tool/start[record_followup]'],
      order: ['tool/decision[record_followup] < run/paused', 'tool/approval-decided[record_followup] < tool/start[record_followup]'],
    },
  })

  it('holds at the pause: nothing written, the decision before the pause; the order with no approval yet fails', () => {
    const c = byName(checkExpectations(shape, paused))
    assert.deepEqual(
      Object.values(c)
        .filter((check) => !check.ok)
        .map((check) => [check.name, check.actual]),
      [['events.order[1]', 'no tool/approval-decided[record_followup], no tool/start[record_followup]']],
    )
  })

  it('after the approval, counts the one follow-up the outbox holds and finds the approval before the write', () => {
    const c = byName(checkExpectations(shape, approved))
    assert.deepEqual(
      Object.values(c)
        .filter((check) => !check.ok)
        .map((check) => check.name),
      ['status', 'sideEffects.followups', 'events.excludes'],
    )
    assert.equal(c['sideEffects.followups'].actual, '1')
    assert.ok(c['events.order[1]'].ok, c['events.order[1]'].actual)
    const done = byName(
      checkExpectations(
        expect({
          status: 'COMPLETED',
          sideEffects: { followups: 1 },
          duplicates: { followups: 0 },
          answer: { includes: ['[source: FU-1]'] },
        }),
        approved,
      ),
    )
    assert.ok(
      Object.values(done).every((check) => check.ok),
      JSON.stringify(done),
    )
  })
})
