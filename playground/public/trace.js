// The trace view: a run as a waterfall of timed bars (turns, steps, context, model calls, actions with
// their policy decision, approval wait and tool attempts, verification), from GET /api/runs/RUN/trace,
// asked again after each new event of the run's stream. A bar whose end is not on record yet is open:
// it grows up to now while the run works or waits there. Clicking a bar of a step shows that step's
// detail (GET /api/runs/RUN/steps/STEP) and what the model saw, rebuilt by the context service
// (GET /api/runs/RUN/steps/STEP/context). All text goes in as text (`el` never parses HTML).

/** Milliseconds as people read them. */
const duration = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`)
const money = (usd) => `$${usd.toFixed(4)}`
const tokens = (u) => (u ? `${u.inputTokens + u.outputTokens} tok (${u.inputTokens} in, ${u.outputTokens} out) ${money(u.costUsd)}` : '')
const json = (value) => (value === undefined ? '' : JSON.stringify(value, null, 2))

/**
 * Where a finished run's timeline ends: the latest span end, or `start`. A loop, not
 * Math.max(...spans): spreading a few hundred thousand values overflows the call stack.
 * @param {{ end?: number }[]} spans
 * @param {number} start
 */
export function timelineEnd(spans, start) {
  let end = start
  for (const s of spans) if (s.end !== undefined && s.end > end) end = s.end
  return end
}

/** A trace with this many spans (or a capped one) is asked for again at most every `SlowRefreshMs`. */
export const LargeTrace = 500
export const SlowRefreshMs = 500
const QuickRefreshMs = 80

/**
 * How long to wait before asking for the trace again after an event, given the last trace: soon for a
 * small run (a burst of events makes one request), at most every half second for a large one (each
 * request replays its log on the server, which also drives the runs).
 * @param {{ spans: unknown[], truncated?: unknown } | undefined} trace
 * @param {number} sinceLastMs how long ago the last request started
 */
export function refreshDelay(trace, sinceLastMs) {
  const large = !!trace && (trace.spans.length >= LargeTrace || !!trace.truncated)
  return large ? Math.max(QuickRefreshMs, SlowRefreshMs - sinceLastMs) : QuickRefreshMs
}

/**
 * @param {{ api: (path: string) => Promise<any>, el: Function, $: (id: string) => HTMLElement }} page
 */
export function traceView({ api, el, $ }) {
  let runId
  let data
  /** Server clock minus this page's: open bars grow to the server's now. */
  let skew = 0
  let selected
  let loadTimer
  let tick
  /** One request for the trace at a time: `inFlight` while one is out, `again` when an event came meanwhile. */
  let inFlight = false
  let again = false
  let lastLoad = 0
  /** The selected step's context, once rebuilt: it does not change as the run goes on. */
  let contextOf

  function open(id) {
    runId = id
    data = undefined
    selected = undefined
    contextOf = undefined
    clearTimeout(loadTimer)
    loadTimer = undefined
    $('trace-timeline').replaceChildren(el('p', { class: 'muted' }, 'loading…'))
    $('trace-detail').hidden = true
    $('trace-detail').replaceChildren()
    $('trace-summary').textContent = ''
    load()
  }

  /** A new event of the run arrived: ask again soon, once for a burst, and not while a request is out. */
  function changed() {
    if (inFlight) {
      again = true
      return
    }
    if (loadTimer !== undefined) return
    loadTimer = setTimeout(load, refreshDelay(data, Date.now() - lastLoad))
  }

  async function load() {
    loadTimer = undefined
    const run = runId
    if (!run) return
    if (inFlight) {
      again = true
      return
    }
    inFlight = true
    again = false
    lastLoad = Date.now()
    try {
      const trace = await api(`/runs/${encodeURIComponent(run)}/trace`)
      if (run !== runId) return
      data = trace
      skew = trace.now - Date.now()
      render()
      // The step's detail only changes while its step is open (or not drawn: capped away).
      const step = selected && data.spans.find((s) => s.kind === 'step' && s.id === selected)
      if (selected && step?.end === undefined) await showStep(selected, false)
    } catch (error) {
      if (run === runId) $('trace-timeline').replaceChildren(el('p', { class: 'error' }, `the trace could not load: ${error.message}`))
    } finally {
      inFlight = false
      if (again && run === runId) changed()
    }
  }

  const openSpans = () => !!data?.spans.some((s) => s.end === undefined)

  /** The drawn rows (span, bar, duration text) and the axis ticks: redrawn as time passes, not rebuilt. */
  let drawn = []
  let ticks = []

  /** Build the rows from the trace just fetched, then lay them out. */
  function render() {
    const box = $('trace-timeline')
    box.dataset.status = data.status
    drawn = data.spans.map((s) => {
      const bar = el('div', { class: `trace-bar ${s.kind} ${s.status}`, 'data-testid': 'trace-bar' })
      const took = el('span', {})
      const label = el(
        'div',
        { class: 'trace-label' },
        el('span', { class: 'trace-name' }, s.label),
        el(
          'span',
          { class: 'trace-meta' },
          took,
          s.usage ? ` · ${s.usage.inputTokens + s.usage.outputTokens} tok · ${money(s.usage.costUsd)}` : '',
        ),
      )
      label.style.paddingLeft = `${s.depth * 14 + 4}px`
      const row = el(
        'div',
        {
          class: `trace-row${s.stepId && s.stepId === selected ? ' selected' : ''}${s.stepId ? ' clickable' : ''}`,
          'data-span': s.id,
          'data-kind': s.kind,
          'data-status': s.status,
          'data-open': String(s.end === undefined),
          'data-step': s.stepId,
          'data-start': String(s.start),
          'data-end': s.end === undefined ? undefined : String(s.end),
          onclick: s.stepId ? () => showStep(s.stepId, true) : undefined,
        },
        label,
        el('div', { class: 'trace-track' }, bar),
      )
      return { span: s, row, bar, took }
    })
    ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
      const t = el('span', { class: 'trace-tick' })
      t.style.left = `${f * 100}%`
      return t
    })
    box.replaceChildren(
      el(
        'div',
        { class: 'trace-row trace-axis' },
        el('div', { class: 'trace-label muted' }, 'span'),
        el('div', { class: 'trace-track' }, ticks),
      ),
      ...drawn.map((d) => d.row),
    )
    layout()
    // Open bars grow with the clock while the run works or waits; the rows stay (a click is not lost).
    clearInterval(tick)
    if (openSpans()) tick = setInterval(layout, 500)
  }

  /** Place every bar on the run's scale: from its start to its end, or to now while it is open. */
  function layout() {
    if (!data) return
    const now = Date.now() + skew
    const start = data.start ?? now
    const end = data.end ?? (openSpans() ? now : timelineEnd(data.spans, start))
    const total = Math.max(1, end - start)
    const pct = (ms) => `${((ms / total) * 100).toFixed(4)}%`
    for (const { span: s, bar, took } of drawn) {
      const stop = s.end ?? now
      bar.style.left = pct(s.start - start)
      bar.style.width = pct(stop - s.start)
      bar.title = `${s.label}: ${duration(stop - s.start)}${s.end === undefined ? ' so far' : ''}${s.note ? `\n${s.note}` : ''}`
      took.textContent = `${duration(stop - s.start)}${s.end === undefined ? '…' : ''}`
    }
    ticks.forEach((t, i) => {
      t.textContent = duration(total * (i / (ticks.length - 1)))
    })
    $('trace-timeline').dataset.total = String(total)
    const cap = data.truncated
    const count = cap ? `${cap.total} spans (the first ${cap.shown} drawn)` : `${data.spans.length} spans`
    $('trace-summary').textContent =
      `${data.status} · ${count} · ${duration(total)}${data.end === undefined ? ' so far' : ''} · ${tokens(data.usage)}`
  }

  async function showStep(stepId, scroll) {
    if (selected !== stepId) contextOf = undefined
    selected = stepId
    for (const row of $('trace-timeline').querySelectorAll('.trace-row')) row.classList.toggle('selected', row.dataset.step === stepId)
    const run = runId
    const panel = $('trace-detail')
    panel.hidden = false
    let detail
    let context
    try {
      ;[detail, context] = await Promise.all([
        api(`/runs/${encodeURIComponent(run)}/steps/${encodeURIComponent(stepId)}`),
        contextOf ?? api(`/runs/${encodeURIComponent(run)}/steps/${encodeURIComponent(stepId)}/context`).catch((error) => ({ error })),
      ])
    } catch (error) {
      panel.replaceChildren(el('p', { class: 'error' }, `step ${stepId}: ${error.message}`))
      return
    }
    if (run !== runId || selected !== stepId) return
    if (!context.error) contextOf = context
    panel.dataset.step = stepId
    panel.replaceChildren(...stepPanel(detail, context))
    if (scroll) panel.scrollIntoView({ block: 'nearest' })
  }

  // ---- the step's detail ----

  const part = (id, title, ...children) =>
    el('div', { class: 'trace-part', 'data-testid': `detail-${id}` }, el('h4', {}, title), ...children)
  const pre = (value) => el('pre', {}, typeof value === 'string' ? value : json(value))
  const line = (label, ...value) => el('div', { class: 'trace-line' }, el('span', { class: 'muted' }, `${label} `), ...value)

  function stepPanel(d, context) {
    const took = d.end !== undefined ? duration(d.end - d.start) : 'open'
    return [
      el(
        'h3',
        {},
        `Step ${d.stepId}`,
        el('span', { class: 'muted' }, ` of ${d.turnId ?? 'the run'} · agent ${d.agent} · seq ${d.seqs.from}–${d.seqs.to} · ${took}`),
      ),
      part(
        'task',
        'Task',
        pre(d.task),
        d.turnInput !== undefined && d.turnInput !== d.task ? line('this turn started with', pre(d.turnInput)) : '',
      ),
      part('context', 'What the model saw', ...contextPart(d, context)),
      part(
        'model',
        'What the model answered',
        ...(d.model.length ? d.model.map(modelCall) : [el('p', { class: 'muted' }, 'no model call on record yet')]),
      ),
      part(
        'actions',
        'Proposals, policy, results',
        ...(d.actions.length ? d.actions.map(action) : [el('p', { class: 'muted' }, 'no action in this step')]),
      ),
      part(
        'verification',
        'Verification',
        ...(d.verification.length
          ? d.verification.map((v) =>
              el(
                'div',
                { class: `trace-box ${v.ok === undefined ? '' : v.ok ? 'ok' : 'bad'}` },
                line('answer checked', pre(v.answer)),
                v.ok === undefined
                  ? line('result', 'not on record yet')
                  : line(
                      'result',
                      el('strong', {}, v.ok ? 'ok' : `failed ${v.code ?? ''}`),
                      v.reason ? ` — ${v.reason}` : '',
                      v.repair ? ' (fed back to the model)' : '',
                    ),
                v.evidence?.length ? line('evidence', pre(v.evidence)) : '',
              ),
            )
          : [el('p', { class: 'muted' }, 'nothing verified in this step (verification runs on a final answer)')]),
      ),
      d.guards.length
        ? part(
            'guards',
            'Guardrails',
            ...d.guards.map((g) => line(`${g.stage} ${g.guard}`, `${g.action}: ${g.reason}${g.actionId ? ` (${g.actionId})` : ''}`)),
          )
        : '',
      part('state', 'State change', ...statePart(d.stateChange)),
    ]
  }

  function contextPart(d, context) {
    const r = d.context.recorded
    const out = [
      r
        ? line(
            'recorded (step/context, seq ' + r.seq + ')',
            `${r.messages} messages, ~${r.tokens} tokens, by ${r.producer}; tools: ${r.tools.join(', ')}`,
          )
        : el('p', { class: 'muted' }, 'the step has not assembled its context yet'),
      ...d.context.compactions.map((c) =>
        line(
          `compaction (seq ${c.seq})`,
          c.rejected
            ? `not used: ${c.rejected}`
            : `${c.strategy}: ${c.before} → ${c.after} tokens, ${c.summarised.length} seq(s) summarised, ${c.kept} kept`,
        ),
      ),
    ]
    if (!r) return out
    if (context?.error) {
      out.push(
        el(
          'p',
          { class: 'error', 'data-testid': 'context-error' },
          `The messages are not in the log and could not be rebuilt: ${context.error.message}`,
        ),
      )
      return out
    }
    out.push(
      el(
        'p',
        { class: `trace-note ${context.matches ? 'ok' : 'warn'}`, 'data-testid': 'context-match' },
        `Rebuilt from the log by ${context.rebuiltBy} (state through seq ${context.stateThrough}): ${context.messages.length} messages, ~${context.tokens} tokens — `,
        context.matches
          ? 'matches the record'
          : `differs from the record (${context.recorded.messages} messages, ~${context.recorded.tokens} tokens)`,
      ),
      el(
        'ul',
        { class: 'trace-caveats' },
        context.caveats.map((c) => el('li', { class: 'muted' }, c)),
      ),
      el(
        'table',
        { class: 'trace-messages', 'data-testid': 'context-messages' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ['from', 'role', 'text'].map((h) => el('th', {}, h)),
          ),
        ),
        el(
          'tbody',
          {},
          context.messages.map((m) =>
            el(
              'tr',
              { class: m.summarised ? 'summarised' : '', 'data-source': String(m.source) },
              el(
                'td',
                {},
                m.source ? `seq ${m.source} ${m.sourceType ?? ''}` : (m.ref ?? 'not from the log'),
                m.summarised ? el('div', { class: 'tag' }, 'summarised') : '',
              ),
              el('td', {}, m.role, m.actionId ? el('div', { class: 'muted' }, m.actionId) : ''),
              el(
                'td',
                {},
                pre(m.text || (m.calls ? '' : '(empty)')),
                m.calls ? pre(m.calls.map((c) => `${c.actionId} ${c.name}(${JSON.stringify(c.args)})`).join('\n')) : '',
              ),
            ),
          ),
        ),
      ),
      context.tools.length
        ? line(
            'tools shown',
            context.tools.map((t) => el('span', { class: 'tag', title: t.description }, t.name)),
          )
        : '',
    )
    return out
  }

  function modelCall(m) {
    const took = m.end !== undefined ? duration(m.end - m.start) : 'waiting for the answer…'
    const decision = m.decision
    return el(
      'div',
      { class: `trace-box ${m.error ? 'bad' : ''}` },
      line(
        `${m.model} attempt ${m.attempt}`,
        `${took}; ${m.messages} messages sent${m.usage ? `; ${tokens(m.usage)}` : ''}${m.reasoning ? '; with reasoning blocks' : ''}`,
      ),
      m.error
        ? line(
            'error',
            `${m.error.code} (${m.error.errorClass}): ${m.error.message}${m.error.retryInMs !== undefined ? ` — retried in ${m.error.retryInMs} ms` : ''}`,
          )
        : '',
      decision
        ? decision.kind === 'final'
          ? line('final answer', pre(decision.text))
          : decision.kind === 'ask_user'
            ? line('asks the user', pre(decision.question))
            : line(
                'calls',
                pre(decision.calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join('\n')),
                decision.text ? pre(decision.text) : '',
              )
        : '',
    )
  }

  function action(a) {
    const p = a.proposal
    const dec = a.decision
    const ap = a.approval
    return el(
      'div',
      { class: 'trace-box', 'data-action': a.actionId },
      el('h5', {}, `${a.actionId} ${a.tool}${a.dryRun ? ' · dry run: nothing was done' : ''}`),
      line(
        'proposal',
        pre(`${a.tool}(${JSON.stringify(p.args)})`),
        el('span', { class: 'muted' }, `seq ${p.seq} · ${p.argsHash}${p.callId ? ` · call ${p.callId}` : ''}`),
      ),
      p.argsError ? line('arguments invalid', p.argsError) : '',
      el(
        'div',
        { 'data-testid': 'detail-policy' },
        dec
          ? line(
              'policy decision',
              el('strong', {}, dec.verdict),
              ` by rule ${dec.ruleId} (${dec.policyVersion}): ${dec.reason}${dec.approvers ? ` · approvers: ${dec.approvers.join(', ')}` : ''}`,
            )
          : line('policy decision', 'not on record'),
      ),
      ap
        ? el(
            'div',
            { 'data-testid': 'detail-approval' },
            line(
              'approval',
              ap.decided
                ? `${ap.decided.approved ? 'approved' : 'rejected'} by ${ap.decided.by}${ap.decided.reason ? ` (${ap.decided.reason})` : ''}${ap.decided.scope ? `, scope ${ap.decided.scope}` : ''}${ap.requested ? ` after waiting ${duration(ap.decided.time - ap.requested.time)}` : ''}`
                : `waiting since seq ${ap.requested?.seq}: ${ap.requested?.reason ?? ''}`,
            ),
          )
        : '',
      ...a.attempts.map((t) =>
        el(
          'div',
          {
            class: `trace-attempt ${t.error ? 'bad' : t.end !== undefined ? 'ok' : ''}`,
            'data-testid': 'detail-attempt',
            'data-attempt': String(t.attempt),
          },
          line(
            `attempt ${t.attempt}`,
            t.end === undefined
              ? 'running…'
              : t.error
                ? `${t.error.code} (${t.error.errorClass}) after ${duration(t.durationMs ?? t.end - t.start)}: ${t.error.message}${t.error.redacted ? ` (redacted by ${t.error.redacted.guard})` : ''}${t.error.willRetry ? ' — retried' : ''}${t.error.unknown ? ' — outcome unknown' : ''}`
                : `ok in ${duration(t.durationMs ?? t.end - t.start)}`,
          ),
          t.output !== undefined ? line(t.redacted ? `result (redacted by ${t.redacted.guard})` : 'raw result', pre(t.output)) : '',
          t.receipt !== undefined ? line('receipt', pre(t.receipt)) : '',
          t.error?.stack ? line('stack', pre(t.error.stack)) : '',
        ),
      ),
      a.preview
        ? el(
            'div',
            { 'data-testid': 'detail-preview' },
            line(`preview (dry run${a.preview.redacted ? `, redacted by ${a.preview.redacted.guard}` : ''})`, pre(a.preview.output)),
          )
        : '',
      a.closedBy
        ? line(
            'closed without a call',
            `${a.closedBy.code}: ${a.closedBy.message}${a.closedBy.redacted ? ` (redacted by ${a.closedBy.redacted.guard})` : ''}`,
          )
        : '',
      a.observation !== undefined
        ? el('div', { 'data-testid': 'detail-observation' }, line('observation (what the model is told)', pre(a.observation)))
        : '',
      a.reconciled ? line('reconciled', `${a.reconciled.committed ? 'committed' : 'not committed'} by ${a.reconciled.by}`) : '',
    )
  }

  function statePart(c) {
    if (c.error) return [el('p', { class: 'error' }, `the log could not be folded: ${c.error}`)]
    const show = (v) => (v === undefined ? '–' : typeof v === 'object' ? JSON.stringify(v) : String(v))
    return [
      el(
        'p',
        { class: 'muted' },
        `Run state folded from the log before the step (seq < ${c.before}) and through its last event (seq ${c.after}).`,
      ),
      c.fields.length
        ? el(
            'table',
            { class: 'trace-state' },
            el(
              'tbody',
              {},
              c.fields.map((f) =>
                el('tr', {}, el('th', {}, f.field), el('td', {}, show(f.before)), el('td', {}, '→'), el('td', {}, show(f.after))),
              ),
            ),
          )
        : '',
      c.actions.length
        ? line(
            'actions',
            c.actions.map((a) => `${a.actionId} ${a.tool}: ${a.from ?? 'new'} → ${a.to} (${a.attempts} attempt(s))`).join('; '),
          )
        : '',
      c.transcript.length
        ? line(
            'transcript gained',
            el(
              'ul',
              {},
              c.transcript.map((t) => el('li', {}, `seq ${t.seq} ${t.kind}${t.ok === false ? ' (failed)' : ''}: ${t.text ?? ''}`)),
            ),
          )
        : '',
    ]
  }

  return { open, changed }
}
