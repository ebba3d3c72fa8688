/**
 * What `cordage` shows a person deciding an approval: the preview recorded with the request (the
 * summary, the amount, the record, the diff, coloured when colour is on), or why there is none; tool
 * text with control characters in it is shown as text, never acted on by the terminal.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { PreviewOutcome } from 'cordage'
import { finish } from '../core/cli/live.ts'
import { formatPreview } from '../core/cli/preview.ts'
import { emptyState } from '../core/kernel/state.ts'

const action = (preview?: PreviewOutcome, dryRun?: boolean) => ({ id: 's1.a1', tool: 'edit_file', preview, dryRun })
const ok = (preview: Extract<PreviewOutcome, { status: 'ok' }>['preview']): PreviewOutcome => ({ status: 'ok', preview, durationMs: 3 })

describe('cordage: the preview of a pending approval', () => {
  it('shows the summary, the amount, the record as JSON and the diff line by line', () => {
    const lines = formatPreview(
      action(
        ok({
          summary: 'refund 40 EUR on order 7',
          amount: { value: 40, currency: 'EUR' },
          record: { order: 7, lines: [1] },
          diff: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n',
        }),
      ),
    )
    assert.deepEqual(lines, [
      '  preview: refund 40 EUR on order 7',
      '  amount: 40 EUR',
      '  record:',
      '    {',
      '      "order": 7,',
      '      "lines": [',
      '        1',
      '      ]',
      '    }',
      '  diff:',
      '    --- a/x',
      '    +++ b/x',
      '    @@ -1 +1 @@',
      '    -old',
      '    +new',
    ])
  })

  it('colours added lines green and removed lines red when colour is on, and only then', () => {
    const lines = formatPreview(action(ok({ summary: 's', diff: '--- a/x\n+++ b/x\n-old\n+new\n context\n' })), true)
    assert.ok(lines.includes('\u001b[31m    -old\u001b[0m'))
    assert.ok(lines.includes('\u001b[32m    +new\u001b[0m'))
    assert.ok(lines.includes('    --- a/x'), 'the file header is not a removed line')
    assert.ok(lines.includes('     context'))
    assert.ok(
      !formatPreview(action(ok({ summary: 's', diff: '-old\n' })), false)
        .join('\n')
        .includes('\u001b'),
    )
  })

  it("writes a tool's control characters out as text: an escape sequence in a diff or summary does not reach the terminal", () => {
    const lines = formatPreview(action(ok({ summary: 'ok\u001b[2Jcleared\nsecond line', diff: '+\u001b]0;title\u0007x\r\n' })))
    const text = lines.join('\n')
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), JSON.stringify(text))
    assert.match(text, /preview: ok\\x1b\[2Jcleared second line/)
    assert.match(text, /\+\\x1b\]0;title\\x07x/)
  })

  it('writes bidirectional controls out as text: a diff cannot read differently from what it does (Trojan Source)', () => {
    const lines = formatPreview(action(ok({ summary: 'refund \u202e0001\u202c EUR', diff: '+const ok = true \u2066// admin\u2069\n' })))
    const text = lines.join('\n')
    assert.ok(!/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(text), JSON.stringify(text))
    assert.match(text, /refund \\u\{202e\}0001\\u\{202c\} EUR/)
    assert.match(text, /\\u\{2066\}\/\/ admin\\u\{2069\}/)
  })

  it('says when there is no preview, when it failed, and what a dry run approval does', () => {
    assert.deepEqual(formatPreview(action({ status: 'unavailable' })), ['  no preview: the tool declares none'])
    assert.deepEqual(formatPreview(action({ status: 'failed', code: 'service_timeout', message: "edit_file's preview did not answer" })), [
      "  preview failed: service_timeout edit_file's preview did not answer",
    ])
    assert.deepEqual(formatPreview(action(undefined, true)), [
      "  dry run: approving s1.a1 runs only edit_file's preview; nothing is changed",
    ])
    assert.deepEqual(formatPreview(action(undefined)), [], 'a request recorded before previews existed shows nothing more')
  })

  it('shows it under the approve and reject hints when a run pauses for approval', () => {
    const state = emptyState('run_1')
    state.status = 'WAITING_APPROVAL'
    state.waiting = { status: 'WAITING_APPROVAL', actionId: 's1.a1', reason: 'asks', seq: 5 } as never
    state.actions['s1.a1'] = {
      id: 's1.a1',
      stepId: 's1',
      tool: 'edit_file',
      args: {},
      argsHash: 'h',
      proposedSeq: 3,
      status: 'awaiting_approval',
      attempts: 0,
      preview: ok({ summary: 'change src/a.js: +1 -1 lines', diff: '-a\n+b\n' }),
    }
    const err: string[] = []
    finish(state, { out: () => {}, err: (l) => err.push(l) }, {}, false, 'cordage')
    // No --preset given: the hints name the default preset, as an absolute path (cli/hints.ts).
    const preset = resolve('presets/default.yml')
    assert.deepEqual(err, [
      'run run_1 WAITING_APPROVAL',
      `  approve: cordage approve run_1 s1.a1 --preset ${preset}`,
      `  reject:  cordage reject run_1 s1.a1 --preset ${preset}`,
      '  preview: change src/a.js: +1 -1 lines',
      '  diff:',
      '    -a',
      '    +b',
    ])
  })
})
