// The playground page: plain JavaScript, no build step. Everything it shows comes from the JSON API
// under /api (docs/guides/playground.md); a run's events come from the store by cursor over Server-Sent Events.
// The events already shown are kept in sessionStorage, so a reload shows them at once and asks the
// server only for those after the last seq: nothing is missed, nothing is shown twice.

import { chatView } from './chat.js'
import { traceView } from './trace.js'
import { renderPreview } from './preview.js'

const $ = (id) => document.getElementById(id)

// ---- the token ----
// Every /api call carries the secret the playground printed at start (`?token=…` in the URL it prints).
// The page takes it from its address once, keeps it in this origin's localStorage (which no other port
// or site can read) and takes it out of the address bar, so it is not left in history or in a
// screenshot. No cookie: a cookie for 127.0.0.1 would go to every port of 127.0.0.1.
const TokenKey = 'cordage-playground-token'

function takeToken() {
  const params = new URLSearchParams(location.search)
  const given = params.get('token')
  if (given === null) {
    try {
      return localStorage.getItem(TokenKey) ?? ''
    } catch {
      return ''
    }
  }
  try {
    localStorage.setItem(TokenKey, given)
  } catch {
    /* storage off: this page still has it */
  }
  params.delete('token')
  const rest = params.toString()
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`)
  return given
}

const token = takeToken()
/** Where EventSource (which cannot send headers) connects: the stream routes take ?token=. */
const withToken = (path) => `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`

/** Without the right token the page can show nothing: say how to get in, once. */
function locked() {
  try {
    localStorage.removeItem(TokenKey)
  } catch {
    /* nothing kept */
  }
  if ($('locked')) return
  document.body.prepend(
    el(
      'p',
      { id: 'locked', class: 'error', role: 'alert', 'data-testid': 'locked' },
      token ? 'This page has a token the playground does not accept (it makes a new one at each start). ' : 'This page has no token. ',
      'Open the address `cordage playground` printed when it started: it ends in ?token=….',
    ),
  )
}

/** An element with attributes and children (strings become text, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (key === 'class') node.className = value
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value === true ? '' : value)
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child))
  return node
}

async function api(path, body) {
  const authorization = `Bearer ${token}`
  const response = await fetch(
    `/api${path}`,
    body === undefined
      ? { headers: { authorization } }
      : { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) },
  )
  const json = await response.json().catch(() => ({}))
  if (response.status === 401) locked()
  if (!response.ok) {
    const error = new Error(json.error?.message ?? `${response.status} ${response.statusText}`)
    error.code = json.error?.code
    throw error
  }
  return json
}

function showError(id, error) {
  const node = $(id)
  if (!error) {
    node.hidden = true
    node.textContent = ''
    return
  }
  node.hidden = false
  node.textContent = error.code ? `[${error.code}] ${error.message}` : String(error.message ?? error)
}

const short = (value, n = 90) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text && text.length > n ? text.slice(0, n - 1) + '…' : (text ?? '')
}
const time = (ms) => new Date(ms).toLocaleTimeString()

// ---- agents, plugins, service graph ----

let agents = []

/** What hot reload watches (`--watch`), or null when it is off. */
let watch = null

/** Started with --read-only: the page shows everything and changes nothing. */
let readOnly = false

async function loadAgents() {
  const { preset, agents: list, watch: watched, readOnly: viewOnly } = await api('/agents')
  agents = list
  watch = watched ?? null
  readOnly = !!viewOnly
  $('preset').textContent = preset
  showWatch()
  showReadOnly()
  const box = $('agent-list')
  box.replaceChildren(...list.map(agentCard))
  const start = $('start-agent')
  const chosen = start.value
  start.replaceChildren(...list.map((a) => el('option', { value: a.name }, a.name)))
  if (chosen) start.value = chosen
  updateTaskHint()
  fillComparePlugins()
}

/** The hot-reload line: off, or the folders watched (each with the agents that run a plugin from it). */
function showWatch() {
  const node = $('watch')
  node.hidden = false
  node.className = watch ? 'tag ok' : 'tag'
  node.textContent = watch ? `hot reload on: watching ${watch.folders.length} plugin folder(s)` : 'hot reload off (start with --watch)'
  node.title = watch ? watch.folders.map((f) => `${f.dir}  ${f.users.map((u) => `${u.agent}:${u.name}`).join(', ')}`).join('\n') : ''
}

/** In a read-only playground, the controls that would change something are off, and say why. */
function showReadOnly() {
  $('read-only').hidden = !readOnly
  for (const id of ['start-button', 'approve', 'reject', 'compare-button']) {
    $(id).disabled = readOnly
    $(id).title = readOnly ? 'read-only playground (--read-only)' : ''
  }
}

const shortHash = (hash) => (hash ? String(hash).slice(0, 15) : 'unknown')

/** What the hash column is, since a lock and a run show another hash of the same plugin (docs/reference/hashes.md). */
const BundleHashTitle =
  'the hash of the code hot reload built and serves now: it changes with each reload that changes the code. Not the content hash a lock file and a run record (docs/reference/hashes.md)'

function agentCard(agent) {
  const plugins = el(
    'table',
    { 'data-testid': `plugins-${agent.name}` },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['plugin', 'version', ...(watch ? ['bundle hash'] : []), 'pinned', 'installed', 'provides', 'requires'].map((h) =>
          el('th', h === 'bundle hash' ? { title: BundleHashTitle } : {}, h),
        ),
      ),
    ),
    el(
      'tbody',
      {},
      agent.plugins.map((p) =>
        el(
          'tr',
          { 'data-plugin': p.name },
          el(
            'td',
            {},
            el('strong', {}, p.name),
            p.model ? el('span', { class: 'tag' }, 'model') : '',
            p.origin === 'path' ? el('span', { class: 'tag' }, 'folder') : '',
          ),
          el('td', { 'data-testid': `version-${agent.name}-${p.name}` }, p.version),
          // With hot reload on, the bundle hash serving now: it changes with every reload, even when the version does not.
          watch
            ? el('td', { 'data-testid': `hash-${agent.name}-${p.name}`, class: 'muted' }, el('code', {}, shortHash(p.hash)))
            : undefined,
          el('td', {}, el('code', {}, p.range)),
          el(
            'td',
            {},
            p.installed.map((v) => el('span', { class: v === p.version ? 'tag ok' : 'tag' }, v)),
          ),
          el(
            'td',
            {},
            Object.entries(p.provides).map(([s, v]) => el('span', { class: 'tag' }, `${s} ${v}`)),
          ),
          el('td', {}, [
            ...Object.entries(p.requires).map(([s, r]) => el('span', { class: 'tag' }, `${s} ${r}`)),
            ...Object.entries(p.optional).map(([s, r]) => el('span', { class: 'tag opt', title: 'optional' }, `${s} ${r}`)),
          ]),
        ),
      ),
    ),
  )
  const services = el(
    'table',
    { 'data-testid': `services-${agent.name}` },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['service', 'provider', 'needed by'].map((h) => el('th', {}, h)),
      ),
    ),
    el(
      'tbody',
      {},
      agent.services.map((s) =>
        el(
          'tr',
          {},
          el('td', {}, el('strong', {}, s.service), s.contract ? el('span', { class: 'muted' }, ` ${s.contract}`) : ''),
          el('td', {}, s.provider ?? el('span', { class: 'muted' }, 'none')),
          el(
            'td',
            {},
            s.neededBy.map((n) =>
              el(
                'span',
                { class: `tag ${n.ok ? 'ok' : n.required ? 'bad' : 'opt'}`, title: n.required ? 'required' : 'optional' },
                `${n.from} ${n.range}`,
              ),
            ),
          ),
        ),
      ),
    ),
  )
  return el(
    'div',
    { class: 'agent', 'data-agent': agent.name },
    el('h3', {}, agent.name, ' ', el('span', { class: 'muted' }, agent.description ?? '')),
    agent.problem ? el('p', { class: 'error' }, agent.problem) : '',
    el('div', { class: 'columns' }, el('div', {}, plugins), el('div', {}, services)),
  )
}

function updateTaskHint() {
  const agent = agents.find((a) => a.name === $('start-agent').value)
  $('start-task').placeholder = agent?.task ? `default: ${agent.task}` : 'a task'
}

// ---- runs ----

let runs = []

async function loadRuns() {
  ;({ runs } = await api('/runs'))
  $('run-list').replaceChildren(
    ...runs.map((r) =>
      el(
        'tr',
        { 'data-run': r.runId, class: r.runId === current?.runId ? 'selected' : '', onclick: () => openRun(r.runId) },
        el('td', {}, el('code', {}, r.runId)),
        el('td', {}, r.agent),
        el('td', { class: `status ${r.status}` }, r.status, r.failureCode ? ` (${r.failureCode})` : ''),
        el('td', {}, r.lastSeq),
        el('td', {}, short(r.task, 70)),
        el('td', {}, time(r.updatedAt)),
      ),
    ),
  )
  const select = $('compare-run')
  const chosen = select.value
  select.replaceChildren(...runs.map((r) => el('option', { value: r.runId }, `${r.runId} · ${r.agent} · ${r.status}`)))
  if (chosen && runs.some((r) => r.runId === chosen)) select.value = chosen
  else if (current && runs.some((r) => r.runId === current.runId)) select.value = current.runId
  fillComparePlugins()
}

$('start-agent').addEventListener('change', updateTaskHint)
$('start-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  showError('start-error')
  const task = $('start-task').value.trim()
  try {
    const { runId } = await api('/runs', { agent: $('start-agent').value, ...(task ? { task } : {}) })
    $('start-task').value = ''
    await openRun(runId)
    await loadRuns()
  } catch (error) {
    showError('start-error', error)
  }
})

// ---- one run, live ----

/** The run shown: its id, the events shown so far (by seq), and its stream. */
let current

/** The chosen run's timeline (trace.js): opened with the run, asked again as its events arrive. */
const trace = traceView({ api, el, $ })

/** The Threads view (chat.js): a thread as a chat, a turn's events live, a waiting turn approved in the Run view. */
const chat = chatView({ api, el, $, withToken, detail, openRun, agents: () => agents, readOnly: () => readOnly })

const storeKey = (runId) => `cordage-events:${runId}`

function saveEvents() {
  try {
    sessionStorage.setItem(storeKey(current.runId), JSON.stringify(current.events))
  } catch {
    /* full: a reload then reads from the start */
  }
}

function restoreEvents(runId) {
  try {
    return JSON.parse(sessionStorage.getItem(storeKey(runId)) ?? '[]')
  } catch {
    return []
  }
}

async function openRun(runId) {
  if (current?.source) current.source.close()
  // In the address, so a reload opens the same run.
  history.replaceState(null, '', `?run=${encodeURIComponent(runId)}${location.hash}`)
  current = { runId, events: [], source: undefined, info: undefined }
  $('run-id').textContent = runId
  $('event-list').replaceChildren()
  $('pending').hidden = true
  $('run-answer').hidden = true
  showError('decide-error')
  for (const row of $('run-list').children) row.classList.toggle('selected', row.dataset.run === runId)
  // What this tab already showed, from sessionStorage; the stream starts after its last seq.
  for (const event of restoreEvents(runId)) addEvent(event, false)
  $('run-stream').textContent = current.events.length
    ? `restored ${current.events.length} event(s), streaming after seq ${lastSeq()}`
    : 'streaming from the start'
  stream()
  trace.open(runId)
  await refreshRun()
}

const lastSeq = () => (current.events.length ? current.events[current.events.length - 1].seq : 0)

function stream() {
  const run = current
  const source = new EventSource(withToken(`/api/runs/${encodeURIComponent(run.runId)}/stream?after=${lastSeq()}`))
  run.source = source
  source.addEventListener('run-event', (message) => {
    if (current !== run) return
    addEvent(JSON.parse(message.data), true)
    saveEvents()
    scheduleRefresh()
    trace.changed()
  })
  source.addEventListener('end', () => {
    source.close()
    if (current === run) $('run-stream').textContent = `complete: ${run.events.length} event(s)`
    scheduleRefresh()
  })
  source.addEventListener('failure', (message) => {
    source.close()
    if (current === run) showError('decide-error', JSON.parse(message.data))
  })
  // On a dropped connection the browser reconnects by itself, sending Last-Event-ID (the last seq).
  source.addEventListener('error', () => {
    if (current === run && source.readyState !== EventSource.CLOSED) $('run-stream').textContent = 'reconnecting…'
  })
  source.addEventListener('open', () => {
    if (current === run && $('run-stream').textContent === 'reconnecting…') $('run-stream').textContent = 'streaming'
  })
}

function addEvent(event, fresh) {
  const seq = lastSeq()
  if (event.seq <= seq) return // already shown
  if (event.seq !== seq + 1) console.warn(`gap: seq ${event.seq} after ${seq}`)
  current.events.push(event)
  $('event-list').append(
    el(
      'tr',
      { class: fresh ? 'new' : '', 'data-seq': event.seq, 'data-type': event.type },
      el('td', {}, event.seq),
      el('td', {}, event.type),
      el('td', {}, event.actionId ?? event.stepId ?? event.turnId ?? ''),
      el('td', { class: 'muted' }, event.producer),
      el('td', {}, detail(event)),
    ),
  )
  $('run-count').textContent = String(current.events.length)
  const status =
    event.type === 'run/end'
      ? event.data.status
      : event.type === 'run/paused'
        ? event.data.status
        : event.type === 'run/start' || event.type === 'run/resumed'
          ? 'RUNNING'
          : undefined
  if (status) setStatus(status)
}

function setStatus(status) {
  const node = $('run-status')
  node.textContent = status
  node.className = `status ${status}`
}

/** One line per event, like `cordage events` prints it. */
function detail(event) {
  const d = event.data ?? {}
  switch (event.type) {
    case 'run/start':
      return `agent=${d.agent} task=${short(d.task, 60)} plugins=${Object.entries(d.plugins)
        .map(([n, v]) => `${n}@${v}`)
        .join(', ')}`
    case 'turn/start':
      return short(d.input)
    case 'turn/end':
      return short(d.answer ?? '')
    case 'step/start':
      return `#${d.index}`
    case 'verify/start':
      return short(d.answer ?? '')
    case 'step/context':
      return `${d.messages} messages ~${d.tokens} tokens, tools: ${(d.tools ?? []).join(', ')}`
    case 'step/model-request':
      return `${d.model} attempt ${d.attempt}`
    case 'step/model-response':
      return d.decision.kind === 'final'
        ? `final ${short(d.decision.text)}`
        : d.decision.kind === 'ask_user'
          ? `asks: ${short(d.decision.question)}`
          : `calls ${d.decision.calls.map((c) => `${c.name}(${short(c.args, 60)})`).join(', ')}`
    case 'tool/proposed':
      return `${d.tool}(${short(d.args, 70)})${d.dryRun ? ' dry run' : ''}`
    case 'tool/decision':
      return `${d.verdict} rule=${d.ruleId ?? '-'} policy=${d.policyVersion}${d.reason ? ` — ${d.reason}` : ''}`
    case 'tool/approval-requested':
      return `${d.tool} — ${d.reason ?? ''}${d.approvers ? ` (approvers: ${d.approvers.join(', ')})` : ''}`
    case 'tool/approval-decided':
      return `${d.approved ? 'approved' : 'rejected'} by ${d.by}${d.reason ? ` — ${d.reason}` : ''}`
    case 'tool/start':
      return `${d.tool} attempt ${d.attempt} timeout=${d.timeoutMs}ms`
    case 'tool/end':
      // A large result is shown by its artifact reference, never inline; a redacted one says so.
      // A dry run did nothing: it says so, so nobody counts it as a write.
      return `${d.tool} ${d.durationMs}ms ${d.dryRun ? 'dry run ' : ''}${d.artifact ? `artifact ${d.artifact.ref} (${d.artifact.bytes} bytes) ` : ''}${d.redacted ? `[redacted by ${d.redacted.guard}] ` : ''}${short(d.observation, 70)}`
    case 'tool/error':
      return `${d.tool} ${d.code} ${d.dryRun ? 'dry run ' : ''}${d.redacted ? `[redacted by ${d.redacted.guard}] ` : ''}${short(d.message, 70)}`
    case 'verify/end':
      return d.ok
        ? `ok${d.evidence?.length ? ` evidence: ${d.evidence.map((e) => e.ref).join(', ')}` : ''}`
        : `failed ${d.code ?? ''} ${short(d.reason ?? '', 60)}`
    case 'run/checkpoint':
      return `${d.reason}${d.pending?.length ? ` pending ${d.pending.join(', ')}` : ''}`
    case 'run/paused':
      return `${d.status} ${short(d.reason ?? '', 80)}`
    case 'run/resumed':
      return `from ${d.from} by ${d.by}`
    case 'step/end':
      return `${d.actions} action(s)`
    case 'run/end':
      return `${d.status}${d.code ? ` (${d.code})` : ''} steps=${d.steps} tokens=${(d.usage?.inputTokens ?? 0) + (d.usage?.outputTokens ?? 0)} cost=$${(d.usage?.costUsd ?? 0).toFixed(4)}`
    case 'run/version-drift': {
      const changes = d.changes.map((c) => `${c.plugin} ${c.from ?? '-'} → ${c.to ?? '-'}`).join(', ')
      // A refusal is the harness's: the command of the person named was not carried out.
      if (d.decision === 'refused')
        return `refused by the harness, not by ${d.by}: plugins changed since the run started (${changes}); ${d.by}'s ${d.command ?? 'command'} was not carried out; give it again with --accept-drift`
      return `${d.decision} by ${d.by}: ${changes}`
    }
    default:
      return short(d, 100)
  }
}

let refreshTimer
function scheduleRefresh() {
  clearTimeout(refreshTimer)
  refreshTimer = setTimeout(() => {
    refreshRun().catch(() => {})
    loadRuns().catch(() => {})
  }, 150)
}

/** Status, pending approval and answer, from the run's state in the store. */
async function refreshRun() {
  if (!current) return
  const run = current
  const info = await api(`/runs/${encodeURIComponent(run.runId)}`)
  if (current !== run) return
  run.info = info
  if (info.lastSeq <= lastSeq()) setStatus(info.status)
  const pending = info.pending
  $('pending').hidden = !pending
  if (pending) {
    $('pending-what').textContent = `${pending.actionId} ${pending.tool}(${short(pending.args, 120)})`
    $('pending-why').textContent =
      `${pending.reason ?? ''}${pending.ruleId ? ` (rule ${pending.ruleId})` : ''}${pending.approvers ? ` · approvers: ${pending.approvers.join(', ')}` : ''}`
  }
  renderPreview($('pending-preview'), pending)
  $('run-answer').hidden = !info.answer
  $('run-answer').textContent = info.answer ?? ''
}

async function decide(approved) {
  if (!current?.info?.pending) return
  showError('decide-error')
  const reason = $('decide-reason').value.trim()
  if (readOnly) return
  for (const id of ['approve', 'reject']) $(id).disabled = true
  try {
    await api(`/runs/${encodeURIComponent(current.runId)}/${approved ? 'approve' : 'reject'}`, {
      actionId: current.info.pending.actionId,
      by: $('decide-by').value.trim(),
      ...(reason ? { reason } : {}),
    })
    $('pending').hidden = true
    // A waiting run's stream stays open, so the run's next events just arrive; reopen it if it closed.
    if (!current.source || current.source.readyState === EventSource.CLOSED) stream()
  } catch (error) {
    showError('decide-error', error)
  } finally {
    for (const id of ['approve', 'reject']) $(id).disabled = readOnly
  }
}
$('approve').addEventListener('click', () => decide(true))
$('reject').addEventListener('click', () => decide(false))

// ---- compare ----

function fillComparePlugins() {
  const run = runs.find((r) => r.runId === $('compare-run').value)
  const agent = agents.find((a) => a.name === run?.agent)
  const select = $('compare-plugin')
  const chosen = select.value
  const choices = (agent?.plugins ?? []).filter((p) => !p.model && !p.provides.store)
  // Plugins with several versions installed first: those are the interesting ones to compare.
  choices.sort((a, b) => (b.installed.length > 1) - (a.installed.length > 1))
  select.replaceChildren(...choices.map((p) => el('option', { value: p.name }, `${p.name} (${p.installed.join(', ')})`)))
  if (chosen && choices.some((p) => p.name === chosen)) select.value = chosen
  fillCompareVersions()
}

function fillCompareVersions() {
  const run = runs.find((r) => r.runId === $('compare-run').value)
  const plugin = agents.find((a) => a.name === run?.agent)?.plugins.find((p) => p.name === $('compare-plugin').value)
  const versions = plugin?.installed ?? []
  for (const [id, pick] of [
    ['compare-a', plugin?.version],
    ['compare-b', versions.find((v) => v !== plugin?.version) ?? plugin?.version],
  ]) {
    const select = $(id)
    const chosen = select.value
    select.replaceChildren(...versions.map((v) => el('option', { value: v }, v === plugin.version ? `${v} (the agent's)` : v)))
    select.value = chosen && versions.includes(chosen) ? chosen : (pick ?? '')
  }
}
$('compare-run').addEventListener('change', fillComparePlugins)
$('compare-plugin').addEventListener('change', () => {
  $('compare-a').value = ''
  $('compare-b').value = ''
  fillCompareVersions()
})

function configOf(id) {
  const text = $(id).value.trim()
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch (error) {
    throw Object.assign(new Error(`config ${id.slice(-1).toUpperCase()} is not JSON: ${error.message}`), { code: 'invalid_input' })
  }
}

$('compare-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  showError('compare-error')
  const button = event.submitter ?? $('compare-form').querySelector('button')
  button.disabled = true
  try {
    const result = await api('/compare', {
      runId: $('compare-run').value,
      plugin: $('compare-plugin').value,
      a: { version: $('compare-a').value, config: configOf('compare-config-a') },
      b: { version: $('compare-b').value, config: configOf('compare-config-b') },
    })
    showCompare(result)
  } catch (error) {
    showError('compare-error', error)
  } finally {
    button.disabled = readOnly
  }
})

function showCompare(result) {
  $('compare-result').hidden = false
  const label = (side) => side.plugin ?? side.label.toUpperCase()
  $('outcome-a').textContent = `A: ${label(result.a)}`
  $('outcome-b').textContent = `B: ${label(result.b)}`
  $('diff-a').textContent = `A: ${label(result.a)}`
  $('diff-b').textContent = `B: ${label(result.b)}`
  const cell = (side, key) => {
    if (side.error) return key === 'status' ? `error [${side.error.code}] ${side.error.message}` : ''
    const o = side.outcome
    switch (key) {
      case 'usage':
        return `${o.usage.inputTokens + o.usage.outputTokens} tokens, $${o.usage.costUsd.toFixed(4)}`
      case 'actions':
        return o.actions.join(' · ')
      case 'replayed':
        return side.replayed.join(' · ') || '–'
      case 'dropped':
        return side.dropped.length ? side.dropped.join(', ') : '–'
      case 'events':
        return String(side.events.length)
      default:
        return o[key] ?? '–'
    }
  }
  const keys = ['status', 'failureCode', 'answer', 'steps', 'usage', 'actions', 'events', 'replayed', 'dropped']
  $('compare-outcome').tBodies[0].replaceChildren(
    ...keys.map((key) =>
      el(
        'tr',
        { class: result.outcome.includes(key) || (key === 'status' && result.outcome.includes('error')) ? 'differs' : '', 'data-key': key },
        el('th', {}, key === 'dropped' ? 'config keys left out' : key === 'replayed' ? 'replayed from the recording' : key),
        el('td', {}, cell(result.a, key)),
        el('td', {}, cell(result.b, key)),
      ),
    ),
  )
  const line = (e, fields) =>
    e
      ? [
          el('div', {}, `${e.seq} ${e.type} ${e.actionId ?? e.stepId ?? ''}`),
          el('div', { class: 'muted' }, `${e.producer} ${e.detail}`),
          fields ? el('div', { class: 'fields' }, `differs: ${fields.join(', ')}`) : '',
        ]
      : ''
  $('compare-events').tBodies[0].replaceChildren(
    ...result.rows.map((row) => {
      const a = row.a !== undefined ? result.a.events[row.a] : undefined
      const b = row.b !== undefined ? result.b.events[row.b] : undefined
      return el(
        'tr',
        { class: row.kind, 'data-kind': row.kind, 'data-type': (a ?? b).type },
        el('td', {}, line(a)),
        el('td', {}, line(b, row.fields)),
      )
    }),
  )
  const count = (kind) => result.rows.filter((r) => r.kind === kind).length
  $('compare-summary').textContent =
    `${count('same')} same, ${count('changed')} changed, ${count('only-a')} only in A, ${count('only-b')} only in B; outcome ${result.outcome.length ? `differs in ${result.outcome.join(', ')}` : 'the same'}`
}

// ---- plugin events ----

function pluginEvents() {
  let last = 0
  const source = new EventSource(withToken('/api/plugin-events/stream'))
  source.addEventListener('plugin-event', (message) => {
    const entry = JSON.parse(message.data)
    if (entry.id <= last) return
    last = entry.id
    const d = entry.data
    const what =
      entry.type === 'plugin/reloaded'
        ? reloaded(d)
        : entry.type === 'plugin/swapped'
          ? swapped(d)
          : entry.type === 'plugin/failed'
            ? `${d.code}: ${d.message}`
            : (d.reason ?? '')
    const outcome = entry.type === 'plugin/reloaded' || entry.type === 'plugin/swapped'
    $('plugin-event-list').prepend(
      el(
        'tr',
        {
          class: `new${outcome ? ` reload ${d.ok ? 'ok' : 'failed'}` : ''}`,
          'data-type': entry.type,
          'data-ok': outcome ? String(!!d.ok) : undefined,
          'data-by': d.by,
          'data-fail-closed': d.failClosed ? 'true' : undefined,
        },
        el('td', {}, entry.id),
        el('td', {}, time(entry.time)),
        el('td', {}, entry.type),
        el('td', {}, d.agent),
        el('td', {}, `${d.name}@${d.version}`),
        el('td', {}, what),
      ),
    )
    // A swap or a reload changes what an agent runs: show the versions loaded now.
    if (entry.type !== 'plugin/failed') scheduleAgents()
  })
}

/**
 * One hot reload (`plugin/reloaded`): ok or failed, old → new version and bundle hash, how long from the
 * file change, and for a failure the error and what serves now: the old version, or a refusing stand-in.
 */
function reloaded(d) {
  const from = `${d.from?.version ?? '?'} (bundle ${shortHash(d.from?.hash)})`
  const to = d.to ? `${d.to.version} (bundle ${shortHash(d.to.hash)})` : '(no build)'
  const took = d.durationMs !== undefined ? ` in ${d.durationMs}ms` : ''
  if (d.ok) return `reloaded ${from} → ${to}${took}`
  const serving = d.failClosed
    ? `fail-closed: ${d.name}@${d.version} refuses everything until an edit builds and starts`
    : `${d.name}@${d.version} (bundle ${shortHash(d.from?.hash)}) keeps serving`
  // The folder is no longer watched: nothing was built, the edits that follow will not be.
  if (d.code === 'watch_failed') return `FAILED [watch_failed]: ${d.message} — ${serving}`
  return `FAILED [${d.code}] ${from} → ${to}${took}: ${d.message} — ${serving}`
}

/** A swap asked for through the playground's API (`plugin/swapped`): what changed, and who asked. */
function swapped(d) {
  const asked = [d.requested !== undefined ? `version ${d.requested}` : '', d.config !== undefined ? `config ${short(d.config, 80)}` : '']
    .filter(Boolean)
    .join(', ')
  const who = `by ${d.by} via ${d.via}`
  if (d.ok) return `swapped ${d.from} → ${d.to} (${asked}) ${who}`
  return `swap FAILED [${d.code}] (${asked}) ${who}: ${d.message}`
}

let agentsTimer
function scheduleAgents() {
  clearTimeout(agentsTimer)
  agentsTimer = setTimeout(() => loadAgents().catch(() => {}), 200)
}

// ---- the latest eval report ----
// `cordage eval --report` leaves a copy of its report in .cordage/eval/latest.html; the link shows
// only when there is one. Its address carries a ticket good for that page alone, never the token.

async function loadEvalLink() {
  const { latest } = await api('/eval')
  const link = $('eval-link')
  link.hidden = !latest
  if (!latest) {
    link.removeAttribute('href')
    return
  }
  link.href = latest.href
  link.title = `written ${new Date(latest.modifiedAt).toLocaleString()} (${latest.bytes} bytes); opens in a new tab`
}

// ---- start ----

async function boot() {
  if (!token) {
    locked()
    return
  }
  await loadAgents()
  await loadRuns()
  await chat.start()
  pluginEvents()
  const runId = new URLSearchParams(location.search).get('run')
  if (runId) await openRun(runId)
  await loadEvalLink().catch(() => {})
  setInterval(() => loadRuns().catch(() => {}), 3000)
  // Often enough that a link keeps a live ticket (good for 10 minutes) and a new report shows up.
  setInterval(() => loadEvalLink().catch(() => {}), 30_000)
  document.body.dataset.ready = 'true'
}

boot().catch((error) => {
  if (error.code === 'unauthorized') return // locked() said how to get in
  document.body.prepend(el('p', { class: 'error', role: 'alert' }, `the playground could not load: ${error.message}`))
})
