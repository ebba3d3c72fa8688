/**
 * A typo is an error, never a match (issue 10 finding 3, and what the red-team review found after it):
 * rules that would silently never fire or always fire, approval patterns that would cover anything, time
 * limits a timer cannot hold, and patterns too large to match in reasonable time are refused where they
 * are written, naming the key path.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { compileArgs, safeRegex } from 'cordage'
import { loadPreset } from '../../core/host/preset.ts'
import { main } from '../../core/cli/main.ts'
import { deskPreset, supportDesk, tempDir } from '../helpers.ts'

async function check(preset: unknown): Promise<{ code: number; err: string }> {
  const file = join(tempDir(), 'p.yml')
  writeFileSync(file, stringify(preset))
  const err: string[] = []
  const code = await main(['check', '--preset', file], { out: () => {}, err: (l) => err.push(l) })
  return { code, err: err.join('\n') }
}

const desk = (rules: unknown[]) => deskPreset({ script: [], rules }, 'outbox.jsonl')

describe('rules that would never fire', () => {
  for (const [label, match, where] of [
    ['an empty tool list', { tool: [] }, /rules\[0\]\.match\.tool: .*is an empty list/],
    ['an empty side-effect list', { sideEffect: [] }, /rules\[0\]\.match\.sideEffect: .*is an empty list/],
    ['an empty agent list', { agent: [] }, /rules\[0\]\.match\.agent: .*is an empty list/],
    ['a blank tool name', { tool: ['record_followup', ' '] }, /rules\[0\]\.match\.tool\[1\]: .*is blank/],
    ['in: [] on an argument', { args: { ticketId: { in: [] } } }, /argument test "ticketId": in: \[\] matches no value at all/],
  ] as const) {
    it(`refuses ${label} in a deny rule: cordage check exits 2 naming the key`, async () => {
      const result = await check(
        desk([
          { id: 'no-refunds', verdict: 'deny', priority: 10, match },
          { id: 'all', verdict: 'allow', match: {} },
        ]),
      )
      assert.equal(result.code, 2, result.err)
      assert.match(result.err, /plugin_config_invalid/)
      assert.match(result.err, where)
    })
  }

  it('refuses a blank approver name, and keeps an empty approvers list (nobody may approve: asks are denied)', async () => {
    const blank = await check(desk([{ id: 'ask', verdict: 'ask', match: {}, approvers: [''] }]))
    assert.equal(blank.code, 2)
    assert.match(blank.err, /rules\[0\]\.approvers\[0\]: .*is blank/)
    const nobody = await check(desk([{ id: 'ask', verdict: 'ask', match: {}, approvers: [] }]))
    assert.equal(nobody.code, 0, nobody.err)
  })

  it('compileArgs refuses in: [] too, for every user of the matcher', () => {
    assert.throws(() => compileArgs({ x: { in: [] } }), { code: 'invalid_input', message: /in: \[\] matches no value/ })
  })
})

describe('approval patterns that would cover anything', () => {
  it('refuses an empty --args pattern, and says how to approve any arguments on purpose', async () => {
    const h = await supportDesk({
      script: [{ calls: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'x' } }] }, { final: 'done' }],
      verifier: { minCount: 0 },
      plugins: ['grants'],
    })
    try {
      const paused = await h.agent.run()
      await assert.rejects(h.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'run', args: {} }), {
        code: 'invalid_input',
        message: /pattern is empty, which would cover any arguments; say so with --any-args/,
      })
      assert.equal((await h.agent.load(paused.runId)).status, 'WAITING_APPROVAL')
    } finally {
      await h.stop()
    }
  })
})

describe('time limits a timer cannot hold', () => {
  for (const [key, value] of [
    ['budgets.deadlineMs', { budgets: { deadlineMs: 3_000_000_000 } }],
    ['serviceTimeouts.policy', { serviceTimeouts: { policy: 3_000_000_000 } }],
    ['durability.leaseTtlMs', { durability: { leaseTtlMs: 3_000_000_000 } }],
  ] as const) {
    it(`refuses ${key} past 2^31-1 ms (Node would fire it at once)`, () => {
      const preset = desk([])
      Object.assign(preset.agents.support, value)
      const file = join(tempDir(), 'p.yml')
      writeFileSync(file, stringify(preset))
      assert.throws(() => loadPreset(file), {
        code: 'preset_invalid',
        message: new RegExp(`${key.replace('.', '\\.')}: expected a number ≤ 2147483647`),
      })
    })
  }
})

describe('patterns too large to match in reasonable time', () => {
  it('refuses a pattern whose compiled program is over the limit, naming its size', () => {
    assert.throws(() => safeRegex('(?:.?){1000}(?:.?){1000}(?:.?){1000}a{1000}c'), {
      code: 'invalid_input',
      message: /compiles to 7003 instructions, more than 2000/,
    })
    assert.equal(safeRegex('ORD-\\d{6}').test('order ORD-123456'), true)
  })
})
