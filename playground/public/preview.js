// What a person deciding an approval is shown of the call: the preview recorded with the request
// (docs/concepts/security.md, "Previews before writes"). Everything in it comes from a tool, so untrusted: it is only ever put
// in the page as text (textContent, never innerHTML), one element per diff line.

/** Diff lines shown at most; the rest is counted (the whole diff is in the run's events). */
const MaxDiffLines = 500

/** Bidirectional controls written out (`⟨U+202E⟩`): they would make a diff read differently from what it does. */
function shown(text) {
  return text.replace(
    /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
  )
}

function el(tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = shown(String(text))
  return node
}

/** The class of one line of a unified diff. */
function lineClass(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file'
  if (line.startsWith('@@')) return 'diff-hunk'
  if (line.startsWith('+')) return 'diff-added'
  if (line.startsWith('-')) return 'diff-removed'
  return 'diff-context'
}

/** Fill `box` with the pending action's preview (`pending` as GET /api/runs/:id gives it), or say why there is none. */
export function renderPreview(box, pending) {
  box.replaceChildren()
  if (!pending) return
  if (pending.dryRun) {
    box.append(el('p', 'preview-note', `Dry run: approving runs only ${pending.tool}'s preview; nothing is changed.`))
    return
  }
  const outcome = pending.preview
  if (!outcome) return
  if (outcome.status === 'unavailable') {
    box.append(el('p', 'preview-note', 'No preview: the tool declares none.'))
    return
  }
  // The guardrail changed what the tool said: whoever decides sees that it did, and by which guard.
  const redacted = () => {
    if (!outcome.redacted) return
    const note = el('p', 'preview-note', `Redacted by guardrail ${outcome.redacted.guard}.`)
    note.dataset.testid = 'preview-redacted'
    box.append(note)
  }
  if (outcome.status === 'failed') {
    const p = el('p', 'preview-failed', `Preview failed: ${outcome.code} ${outcome.message}`)
    p.dataset.testid = 'preview-failed'
    box.append(p)
    redacted()
    return
  }
  const preview = outcome.preview
  const summary = el('p', 'preview-summary', preview.summary)
  summary.dataset.testid = 'preview-summary'
  box.append(summary)
  redacted()
  if (preview.amount) {
    const amount = el('p', 'preview-amount', `Amount: ${preview.amount.value} ${preview.amount.currency}`)
    amount.dataset.testid = 'preview-amount'
    box.append(amount)
  }
  if (preview.record !== undefined) {
    const record = el('pre', 'preview-record', JSON.stringify(preview.record, null, 2))
    record.dataset.testid = 'preview-record'
    box.append(record)
  }
  if (typeof preview.diff === 'string') {
    const diff = el('div', 'preview-diff')
    diff.dataset.testid = 'preview-diff'
    const lines = preview.diff.replace(/\n$/, '').split('\n')
    for (const line of lines.slice(0, MaxDiffLines)) {
      const row = el('div', `diff-line ${lineClass(line)}`, line)
      diff.append(row)
    }
    if (lines.length > MaxDiffLines) diff.append(el('div', 'diff-line diff-more', `… ${lines.length - MaxDiffLines} more lines`))
    box.append(diff)
  }
}
