// The Threads view: a thread as a chat. A thread is a series of runs, one run per turn; each turn shows
// the user's message, then the answer (or, while the turn runs or waits, its status and what it waits
// for, with a way to the Run view, where a pending action is approved), and the turn's events, followed
// live over the run's Server-Sent Events stream. The box sends the next message (POST
// /api/threads/ID/turns); it is off, with the reason shown, while the last turn has not ended. All text
// goes in as text (`el` never parses HTML); nothing here uses innerHTML.

/** The statuses a turn ends in: only then does the thread take the next message. */
const Terminal = new Set(['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED'])

/** A long message or answer, cut for one line of events (the turn's card has it whole). */
const cut = (text) => (typeof text === 'string' && text.length > 120 ? `${text.slice(0, 119)}…` : String(text ?? ''))

/** Events after which the turn's line (status, answer, what it waits for) is asked for again. */
const Changes = new Set(['run/paused', 'run/resumed', 'run/end', 'turn/end', 'tool/approval-requested', 'tool/approval-decided'])

/** What a turn that has not ended is doing, in words, and what unblocks it. */
export function blockedReason(turn) {
  const what = `turn ${turn.turn} is ${turn.status}`
  switch (turn.status) {
    case 'WAITING_APPROVAL':
      return `${what}: approve or reject its pending action (Run view) before the next message`
    case 'WAITING_USER':
      return `${what}: it asked a question; answer it before the next message`
    case 'WAITING_RECONCILIATION':
      return `${what}: reconcile its unknown effect before the next message`
    case 'SUSPENDED':
      return `${what}: resume or cancel it before the next message`
    default:
      return `${what}: wait until it ends`
  }
}

/**
 * @param {{
 *   api: (path: string, body?: unknown) => Promise<any>,
 *   el: (tag: string, attrs?: object, ...children: unknown[]) => HTMLElement,
 *   $: (id: string) => HTMLElement,
 *   withToken: (path: string) => string,
 *   detail: (event: any) => string,
 *   openRun: (runId: string) => Promise<void>,
 *   agents: () => { name: string }[],
 *   readOnly: () => boolean,
 * }} deps
 */
export function chatView({ api, el, $, withToken, detail, openRun, agents, readOnly }) {
  /** The thread shown: its id, its last answer from the API, and a stream per turn that has not ended. */
  let open
  /** Events seen per run (by seq), kept across redraws; which turns' event lists are unfolded. */
  const events = new Map()
  const unfolded = new Set()

  const root = $('chat-root')
  const agentSelect = el('select', { id: 'chat-agent', 'data-testid': 'chat-agent' })
  const idInput = el('input', { id: 'chat-new-id', 'data-testid': 'chat-new-id', placeholder: '(made for you)', size: 18 })
  const firstInput = el('textarea', { id: 'chat-first', 'data-testid': 'chat-first', rows: 2, placeholder: 'the first message' })
  const startButton = el('button', { type: 'submit', 'data-testid': 'chat-start' }, 'Start thread')
  const startError = el('p', { class: 'error', role: 'alert', 'data-testid': 'chat-start-error', hidden: true })
  const list = el('ul', { class: 'chat-threads', 'data-testid': 'chat-threads' })
  const listNote = el('p', { class: 'muted', 'data-testid': 'chat-unsupported', hidden: true })
  const title = el('h3', { 'data-testid': 'chat-title' }, 'pick a thread, or start one')
  const turnsBox = el('div', { class: 'chat-turns', 'data-testid': 'chat-turns' })
  const input = el('textarea', { id: 'chat-input', 'data-testid': 'chat-input', rows: 3, placeholder: 'your next message' })
  const send = el('button', { type: 'submit', 'data-testid': 'chat-send' }, 'Send')
  const blocked = el('p', { class: 'muted', 'data-testid': 'chat-blocked', hidden: true })
  const sendError = el('p', { class: 'error', role: 'alert', 'data-testid': 'chat-send-error', hidden: true })
  const composer = el(
    'form',
    { class: 'chat-composer', 'data-testid': 'chat-composer', hidden: true },
    input,
    el('div', { class: 'row' }, send, blocked),
  )

  root.replaceChildren(
    el(
      'div',
      { class: 'chat-side' },
      el(
        'form',
        { class: 'chat-new', 'data-testid': 'chat-new' },
        el('div', { class: 'row' }, el('label', {}, 'agent ', agentSelect), el('label', {}, 'id ', idInput)),
        firstInput,
        el('div', { class: 'row' }, startButton),
      ),
      startError,
      listNote,
      list,
    ),
    el('div', { class: 'chat-main' }, title, turnsBox, composer, sendError),
  )

  const showError = (node, error) => {
    node.hidden = !error
    node.textContent = error ? (error.code ? `[${error.code}] ${error.message}` : String(error.message ?? error)) : ''
  }

  // ---- the list of threads ----

  async function loadThreads() {
    const names = agents().map((a) => a.name)
    const chosen = agentSelect.value
    agentSelect.replaceChildren(...names.map((n) => el('option', { value: n }, n)))
    if (chosen && names.includes(chosen)) agentSelect.value = chosen
    startButton.disabled = readOnly()
    startButton.title = readOnly() ? 'read-only playground (--read-only)' : ''
    const { threads, unsupported } = await api('/threads')
    listNote.hidden = !unsupported.length
    listNote.textContent = unsupported.length
      ? `no threads for ${unsupported.join(', ')}: that store keeps none (store contract before 2.3.0)`
      : ''
    list.replaceChildren(
      ...threads.map((t) =>
        el(
          'li',
          {
            'data-thread': t.threadId,
            class: t.threadId === open?.id ? 'selected' : '',
            onclick: () => openThread(t.threadId),
          },
          el('code', {}, t.threadId),
          ' ',
          el('span', { class: 'muted' }, `${t.agent} · ${t.turns} turn(s) · `),
          el('span', { class: `status ${t.lastStatus}` }, t.lastStatus),
          t.closed ? el('span', { class: 'tag' }, 'closed') : '',
        ),
      ),
    )
    if (!threads.length) list.append(el('li', { class: 'muted' }, 'no threads yet'))
    // A turn added elsewhere (another tab, the CLI) shows up in the open thread too.
    // (Once per change of the list's line: a line that lags the run's state must not make a loop.)
    const mine = open?.info && threads.find((t) => t.threadId === open.id)
    const line = mine && `${mine.turns} ${mine.lastStatus} ${mine.updatedAt}`
    if (mine && line !== open.line && (mine.turns !== open.info.thread.turns || mine.lastStatus !== open.info.turns.at(-1)?.status)) {
      open.line = line
      scheduleRefresh()
    }
  }

  // ---- one thread ----

  async function openThread(id) {
    if (open?.id !== id) {
      close()
      open = { id, info: undefined, sources: new Map() }
      unfolded.clear()
      showError(sendError)
      for (const li of list.children) li.classList.toggle('selected', li.dataset.thread === id)
    }
    await refresh()
  }

  function close() {
    if (!open) return
    for (const source of open.sources.values()) source.close()
    open.sources.clear()
  }

  async function refresh() {
    const shown = open
    if (!shown) return
    const info = await api(`/threads/${encodeURIComponent(shown.id)}`)
    if (open !== shown) return
    shown.info = info
    draw()
    for (const turn of info.turns) if (!Terminal.has(turn.status)) follow(turn.runId)
  }

  let refreshTimer
  function scheduleRefresh() {
    clearTimeout(refreshTimer)
    refreshTimer = setTimeout(() => {
      refresh().catch((error) => showError(sendError, error))
      loadThreads().catch(() => {})
    }, 120)
  }

  function draw() {
    const { thread, turns } = open.info
    title.replaceChildren(
      'Thread ',
      el('code', { 'data-testid': 'chat-thread-id' }, thread.threadId),
      el('span', { class: 'muted' }, ` · agent ${thread.agent} · ${thread.turns} turn(s)`),
      thread.closed ? el('span', { class: 'tag', 'data-testid': 'chat-closed' }, 'closed') : '',
    )
    turnsBox.replaceChildren(...turns.map(turnCard))
    const last = turns.at(-1)
    const reason = readOnly()
      ? 'read-only playground (--read-only): no message can be sent'
      : thread.closed
        ? `the thread was closed by ${thread.closed.by}: it takes no more messages; start a new thread`
        : last && !Terminal.has(last.status)
          ? blockedReason(last)
          : ''
    composer.hidden = false
    input.disabled = send.disabled = !!reason || sending
    blocked.hidden = !reason
    blocked.textContent = reason
    composer.dataset.blocked = reason ? 'true' : 'false'
  }

  function turnCard(turn) {
    const ended = Terminal.has(turn.status)
    const seen = events.get(turn.runId) ?? []
    const list = el('ol', { class: 'chat-events', 'data-testid': `chat-events-${turn.turn}` }, seen.map(eventLine))
    const fold = el(
      'details',
      { 'data-testid': `chat-events-toggle-${turn.turn}`, open: unfolded.has(turn.runId) },
      el('summary', {}, `events (${seen.length}${ended ? '' : ', live'})`),
      list,
    )
    fold.addEventListener('toggle', () => {
      if (fold.open) {
        unfolded.add(turn.runId)
        if (!seen.length) loadEvents(turn.runId).catch((error) => showError(sendError, error))
      } else unfolded.delete(turn.runId)
    })
    return el(
      'article',
      { class: `chat-turn ${turn.status}`, 'data-turn': turn.turn, 'data-status': turn.status, 'data-run': turn.runId },
      el(
        'div',
        { class: 'chat-msg user' },
        el('span', { class: 'who' }, `you · turn ${turn.turn}`),
        el('p', { 'data-testid': 'chat-user' }, turn.task),
      ),
      el(
        'div',
        { class: 'chat-msg agent' },
        el(
          'span',
          { class: 'who' },
          `${turn.agent} · `,
          el('span', { class: `status ${turn.status}`, 'data-testid': 'chat-status' }, turn.status),
          turn.failureCode ? el('span', { class: 'tag bad', 'data-testid': 'chat-failure' }, turn.failureCode) : '',
          ' · run ',
          el('a', { href: '#run', 'data-testid': 'chat-open-run', onclick: () => openRun(turn.runId) }, turn.runId),
        ),
        turn.answer !== undefined ? el('p', { 'data-testid': 'chat-answer' }, turn.answer) : waitingLine(turn),
      ),
      fold,
    )
  }

  /** A turn without an answer: what it is doing, or why it ended without one. */
  function waitingLine(turn) {
    if (turn.status === 'WAITING_APPROVAL' && turn.waiting?.actionId)
      return el(
        'p',
        { class: 'pending', 'data-testid': 'chat-waiting' },
        `waiting for approval: ${turn.waiting.tool ?? 'an action'} (${turn.waiting.actionId})${turn.waiting.ruleReason ? ` — ${turn.waiting.ruleReason}` : ''} `,
        el(
          'button',
          {
            type: 'button',
            'data-testid': 'chat-approve-link',
            onclick: async () => {
              await openRun(turn.runId)
              $('run').scrollIntoView()
            },
          },
          'Approve or reject in the Run view',
        ),
      )
    const text = turn.waiting
      ? `${turn.status}: ${turn.waiting.reason}`
      : Terminal.has(turn.status)
        ? `${turn.status}${turn.failureCode ? ` [${turn.failureCode}]` : ''}${turn.reason ? `: ${turn.reason}` : ''}`
        : `${turn.status}…`
    return el('p', { class: 'muted', 'data-testid': 'chat-progress' }, text)
  }

  function eventLine(event) {
    return el(
      'li',
      { 'data-seq': event.seq, 'data-type': event.type },
      el('code', {}, String(event.seq)),
      ' ',
      el('strong', {}, event.type),
      ' ',
      event.type === 'thread/history' ? historyLine(event.data) : detail(event),
    )
  }

  /** What the turn was given of the turns before it: their messages and answers, in order. */
  function historyLine(d) {
    const said = (d.entries ?? [])
      .map((e) =>
        e.kind === 'user'
          ? `you: ${cut(e.text)}`
          : e.kind === 'assistant' && e.decision?.kind === 'final'
            ? `answer: ${cut(e.decision.text)}`
            : '',
      )
      .filter(Boolean)
    return `${d.turns} earlier turn(s)${d.shortened ? ` (${d.shortened} shortened)` : ''}: ${said.join(' | ')}`
  }

  /** Add an event of a run to what was seen, in seq order; to its turn's list when that is drawn. */
  function addEvent(runId, event) {
    const seen = events.get(runId) ?? []
    if (seen.length && event.seq <= seen[seen.length - 1].seq) return
    seen.push(event)
    events.set(runId, seen)
    const card = turnsBox.querySelector(`[data-run="${CSS.escape(runId)}"]`)
    if (!card) return
    card.querySelector('ol.chat-events').append(eventLine(event))
    card.querySelector('summary').textContent = `events (${seen.length}, live)`
  }

  async function loadEvents(runId) {
    const seen = events.get(runId) ?? []
    const after = seen.length ? seen[seen.length - 1].seq : 0
    const { events: more } = await api(`/runs/${encodeURIComponent(runId)}/events?after=${after}`)
    for (const event of more) addEvent(runId, event)
    if (open?.info) draw()
  }

  /** Follow a turn that has not ended: its events as they become durable, until run/end. */
  function follow(runId) {
    const shown = open
    if (shown.sources.has(runId)) return
    const seen = events.get(runId) ?? []
    const after = seen.length ? seen[seen.length - 1].seq : 0
    const source = new EventSource(withToken(`/api/runs/${encodeURIComponent(runId)}/stream?after=${after}`))
    shown.sources.set(runId, source)
    source.addEventListener('run-event', (message) => {
      if (open !== shown) return
      const event = JSON.parse(message.data)
      addEvent(runId, event)
      if (Changes.has(event.type)) scheduleRefresh()
    })
    const stop = () => {
      source.close()
      shown.sources.delete(runId)
      if (open === shown) scheduleRefresh()
    }
    source.addEventListener('end', stop)
    source.addEventListener('failure', (message) => {
      stop()
      if (open === shown) showError(sendError, JSON.parse(message.data))
    })
  }

  // ---- sending ----

  let sending = false

  composer.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (!open?.info || sending) return
    const task = input.value.trim()
    if (!task) {
      showError(sendError, { code: 'invalid_input', message: 'write a message first' })
      return
    }
    showError(sendError)
    sending = true
    input.disabled = send.disabled = true
    try {
      await api(`/threads/${encodeURIComponent(open.id)}/turns`, { task })
      input.value = ''
    } catch (error) {
      showError(sendError, error)
    } finally {
      sending = false
    }
    await refresh().catch((error) => showError(sendError, error))
    await loadThreads().catch(() => {})
  })

  root.querySelector('form.chat-new').addEventListener('submit', async (event) => {
    event.preventDefault()
    showError(startError)
    const task = firstInput.value.trim()
    const thread = idInput.value.trim()
    startButton.disabled = true
    try {
      const started = await api('/threads', { agent: agentSelect.value, task, ...(thread ? { thread } : {}) })
      firstInput.value = ''
      idInput.value = ''
      await loadThreads()
      await openThread(started.threadId)
    } catch (error) {
      showError(startError, error)
    } finally {
      startButton.disabled = readOnly()
    }
  })

  return {
    /** Fill the list (after the agents are known), and keep it fresh. */
    async start() {
      await loadThreads()
      setInterval(() => loadThreads().catch(() => {}), 3000)
    },
    openThread,
  }
}
