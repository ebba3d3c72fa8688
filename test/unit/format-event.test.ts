/**
 * One line per event in `cordage run` / `cordage events` (core/cli/format.ts): what issue 12 added to
 * the record shows in the line too, so a person does not need --json to see it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { formatEvent } from '../../core/cli/format.ts'

const envelope = { seq: 9, time: 0, runId: 'run_1', turnId: 't1', stepId: 's1', actionId: 's1.a1', schema: 1, producer: 'kernel@0.1.0' }
const event = (type: string, data: unknown) => ({ ...envelope, type, data }) as unknown as RunEvent

describe('formatEvent', () => {
  it('says a result became an artifact, was redacted, or was a dry run', () => {
    const ref = `artifact:sha256:${'a'.repeat(64)}`
    const line = formatEvent(
      event('tool/end', {
        tool: 'export',
        attempt: 1,
        observation: 'head…',
        durationMs: 3,
        artifact: { ref, sha256: 'a'.repeat(64), bytes: 5_000_000, mediaType: 'application/json' },
        redacted: { guard: 'pii' },
      }),
    )
    assert.match(line, new RegExp(`→ ${ref} \\(5000000 B\\) \\(redacted by pii\\)`))
    assert.match(
      formatEvent(event('tool/end', { tool: 'edit_file', attempt: 1, observation: 'x', durationMs: 1, dryRun: true })),
      / dry run /,
    )
    assert.match(
      formatEvent(event('tool/proposed', { tool: 'edit_file', args: {}, argsHash: 'h', dryRun: true })),
      /edit_file\(\{\}\) dry run$/,
    )
  })

  it('says a tool/error ended a dry run or was redacted, and a preview or a reconciled output was redacted', () => {
    const error = formatEvent(
      event('tool/error', {
        tool: 'charge',
        errorClass: 'tool_deterministic',
        code: 'tool_failed',
        message: 'card [redacted:card] was declined',
        observation: 'x',
        redacted: { guard: 'card' },
        dryRun: true,
      }),
    )
    assert.match(
      error,
      /s1\.a1  charge tool_failed \(tool_deterministic\) dry run \(redacted by card\): "card \[redacted:card\] was declined"$/,
    )
    const request = formatEvent(
      event('tool/approval-requested', {
        tool: 'charge',
        args: {},
        argsHash: 'h',
        policyVersion: 'p',
        ruleId: 'ask',
        reason: 'r',
        preview: { status: 'ok', preview: { summary: 'charge [redacted:card]' }, durationMs: 1, redacted: { guard: 'card' } },
      }),
    )
    assert.match(request, /preview: "charge \[redacted:card\]" \(redacted by card\)$/)
    const reconciled = formatEvent(
      event('tool/reconciled', { tool: 'charge', key: 'k', committed: true, by: 'charge:reconcile', redacted: { guard: 'card' } }),
    )
    assert.match(reconciled, /\(redacted by card\)$/)
  })

  it("shows a decision's constraints and a pause's code", () => {
    const decision = formatEvent(
      event('tool/decision', {
        verdict: 'allow',
        ruleId: 'small-refunds',
        policyVersion: 'p@1',
        reason: 'ok',
        constraints: { maxAmount: 100 },
      }),
    )
    assert.match(decision, /constraints=\{"maxAmount":100\}/)
    const paused = formatEvent(event('run/paused', { status: 'SUSPENDED', reason: 'call s1.a1 must reserve', code: 'reservation_refused' }))
    assert.match(paused, /SUSPENDED \(reservation_refused\) call s1\.a1 must reserve/)
  })
})
