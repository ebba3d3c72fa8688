/**
 * @module playground/compare
 * Replay one recorded run against two versions of one plugin, side by side. The replay is an eval
 * case run by `cordage eval`'s engine (cordage/eval): the recorded script is the model's decisions
 * (the run's `step/model-response` events, in order), fed to model-scripted, so both sides see exactly
 * the answers the model gave; each side is a `--plugin` variant. The recorded calls are the case's
 * `recorded:` (docs/eval.md, "Replays"): a call with side effects is answered from its recorded result,
 * never run, and refused (`replay_refused`) when the recording has none; a person's decision on a call
 * is given again only for that same call, as `replay:NAME`, never as NAME. A recorded answer to a
 * question is the case's answer. So a side runs as an eval case does: on its own copy of the preset's
 * folder, with its own store, and it reaches no real effect.
 */
import { CordageError, type RunEvent, type RunState } from 'cordage'
import type { Cordage, AgentSpec, PluginRef } from 'cordage/host'
import { catalogFor, runCase, type EvalCase, type RecordedCall, type Variant } from 'cordage/eval'

export interface SideRequest {
  /** An exact version or a range of the plugin under comparison. */
  version: string
  /** Its config; default: the agent's config for that plugin, with the keys this version does not know left out. */
  config?: Record<string, unknown>
}

export interface CompareRequest {
  runId: string
  /** The agent whose preset entry is replayed (the run's agent). */
  agent: string
  plugin: string
  a: SideRequest
  b: SideRequest
}

/** One replayed event, reduced to what can differ between versions (no times, run ids or tickets). */
export interface ReplayedEvent {
  seq: number
  type: string
  stepId?: string
  actionId?: string
  producer: string
  /** A one-line summary for the page. */
  detail: string
  data: unknown
}

export interface Outcome {
  status: string
  failureCode?: string
  reason?: string
  answer?: string
  steps: number
  usage: { inputTokens: number; outputTokens: number; costUsd: number }
  /** Each action's final status: `s1.a1 record_followup succeeded`. */
  actions: string[]
}

export interface SideResult {
  label: string
  /** name@version actually loaded. */
  plugin?: string
  config?: unknown
  /** Config keys left out because this version does not know them. */
  dropped: string[]
  /**
   * What the replay gave the side, in order: recorded decisions replayed (`alice's recorded approval of
   * s1.a1 (record_followup) replayed as replay:alice`), calls answered from the recording or refused.
   */
  replayed: string[]
  events: ReplayedEvent[]
  outcome?: Outcome
  /** The side could not run: its preset was refused or a plugin failed. */
  error?: { code: string; message: string }
}

/** One row of the aligned event lists. */
export interface DiffRow {
  kind: 'same' | 'changed' | 'only-a' | 'only-b'
  a?: number
  b?: number
  /** For `changed`: the fields that differ (`producer`, `data.verdict`, ...). */
  fields?: string[]
}

export interface CompareResult {
  runId: string
  agent: string
  plugin: string
  /** The recorded script fed to model-scripted. */
  script: unknown[]
  a: SideResult
  b: SideResult
  rows: DiffRow[]
  /** Outcome fields that differ (`status`, `answer`, `actions`, ...). */
  outcome: string[]
}

/** Turn the model's recorded decisions into a model-scripted script, with the usage each call reported. */
export function scriptOf(events: RunEvent[]): unknown[] {
  const script: unknown[] = []
  for (const event of events) {
    if (event.type !== 'step/model-response') continue
    const { decision, usage } = event.data
    if (decision.kind === 'final') script.push({ final: decision.text, usage })
    else if (decision.kind === 'ask_user') script.push({ ask: decision.question, usage })
    else if (decision.calls.length === 1) script.push({ tool: decision.calls[0].name, args: decision.calls[0].args, usage })
    else script.push({ calls: decision.calls.map((c) => ({ tool: c.name, args: c.args })), usage })
  }
  return script
}

/**
 * Replay `request.runId`'s recorded script against both versions.
 * @throws CordageError `invalid_input` (nothing recorded to replay, or the plugin is the model or the store)
 */
export async function compare(app: Cordage, request: CompareRequest, recorded: RunEvent[]): Promise<CompareResult> {
  const spec = app.preset.agents[request.agent]
  if (!spec) throw new CordageError('agent_not_found', `preset ${app.preset.shown} has no agent "${request.agent}"`)
  const script = scriptOf(recorded)
  if (!script.length)
    throw new CordageError('invalid_input', `run ${request.runId} has no recorded model decision (step/model-response) to replay`)
  refOf(app, spec, request.plugin)
  const task = recorded.find((e) => e.type === 'run/start')
  if (task?.type !== 'run/start') throw new CordageError('invalid_input', `run ${request.runId} has no run/start event`)

  const answers = answersOf(recorded)
  const calls = recordedCalls(recorded, request.runId)
  const a = await replaySide(app, spec, request.plugin, request.a, 'a', script, task.data.task, answers, calls, request.runId)
  const b = await replaySide(app, spec, request.plugin, request.b, 'b', script, task.data.task, answers, calls, request.runId)
  return {
    runId: request.runId,
    agent: request.agent,
    plugin: request.plugin,
    script,
    a,
    b,
    rows: align(a.events, b.events),
    outcome: outcomeDiff(a, b),
  }
}

function refOf(app: Cordage, spec: AgentSpec, plugin: string): PluginRef {
  const names = (ref: PluginRef) => ref.plugin ?? app.catalog.entries().find((e) => e.dir === ref.path)?.manifest.name
  if (names(spec.model) === plugin)
    throw new CordageError(
      'invalid_input',
      `"${plugin}" is the model of agent "${spec.name}"; a replay feeds the recorded decisions through model-scripted, so compare another plugin`,
    )
  const ref = spec.plugins.find((p) => names(p) === plugin)
  if (!ref)
    throw new CordageError(
      'plugin_not_found',
      `agent "${spec.name}" has no plugin "${plugin}"; it has ${spec.plugins.map(names).join(', ')}`,
    )
  if (providesStore(app, ref))
    throw new CordageError('invalid_input', `"${plugin}" is the store; a replay always runs on store-memory, so compare another plugin`)
  return ref
}

function providesStore(app: Cordage, ref: PluginRef): boolean {
  const entry = ref.path !== undefined ? app.catalog.entries().find((e) => e.dir === ref.path) : safeFind(app, ref.plugin!, ref.version)
  return !!entry?.manifest.provides?.store
}

function safeFind(app: Cordage, name: string, range: string) {
  try {
    return app.catalog.find(name, range)
  } catch {
    return undefined
  }
}

async function replaySide(
  app: Cordage,
  spec: AgentSpec,
  plugin: string,
  side: SideRequest,
  label: 'a' | 'b',
  script: unknown[],
  task: string,
  answers: EvalCase['answers'],
  recorded: RecordedCall[],
  runId: string,
): Promise<SideResult> {
  const result: SideResult = { label, dropped: [], replayed: [], events: [] }
  const replay: EvalCase = {
    eval: 1,
    name: `replay of ${runId} (${label})`,
    file: app.preset.file,
    shown: app.preset.shown,
    preset: app.preset.file,
    agent: spec.name,
    task,
    model: { script: script as Record<string, unknown>[] },
    faults: [],
    answers,
    records: {},
    // Nothing runs as it is: every call with side effects is the recording's, or refused.
    sandbox: [],
    recorded,
    // What a replay shows is the difference between the sides, not whether a case held.
    expect: { status: 'COMPLETED' },
    serial: true,
  }
  const variant: Variant = {
    id: label,
    kind: 'plugin',
    label: `${plugin} at ${side.version}`,
    plugin,
    range: side.version,
    config: side.config,
  }
  const run = await runCase(replay, variant, {
    catalog: catalogFor(app.catalog),
    // A recorded call that was rejected has no result; a side whose policy lets it run shows it refused where it comes.
    refuseUncovered: false,
    recordedFrom: `run ${runId}`,
    inspect: ({ state, events, prepared, given }) => {
      if (prepared.plugin) {
        result.plugin = `${prepared.plugin.name}@${prepared.plugin.version}`
        result.config = prepared.plugin.config
        result.dropped = prepared.plugin.dropped
      }
      result.replayed = given
      result.events = events.map((e) => reduce(e, state.runId))
      result.outcome = outcomeOf(state)
    },
  })
  if (run.error) result.error = { code: run.error.code, message: run.error.message.replaceAll('<case folder>', `<replay of ${runId}>`) }
  return result
}

/** The recorded answers to the model's questions, in order. (Decisions on calls are recorded calls: {@link recordedCalls}.) */
function answersOf(recorded: RunEvent[]): EvalCase['answers'] {
  const answers: EvalCase['answers'] = []
  for (const e of recorded)
    if (e.type === 'run/resumed' && e.data.from === 'WAITING_USER' && e.data.input) answers.push({ input: e.data.input })
  return answers
}

/**
 * Each call of the recorded run that was decided by a person or came to a result: its tool and
 * arguments, the decision, and the result (its tool/end, or a committed tool/reconciled). A dry run's
 * preview is not a result of the call, and a call whose arguments did not parse never ran.
 */
function recordedCalls(recorded: RunEvent[], runId: string): RecordedCall[] {
  const calls = new Map<string, RecordedCall>()
  for (const e of recorded) {
    const call = e.actionId ? calls.get(e.actionId) : undefined
    if (e.type === 'tool/proposed' && e.actionId && e.data.argsError === undefined && !e.data.dryRun)
      calls.set(e.actionId, { tool: e.data.tool, args: e.data.args, from: `run ${runId} ${e.actionId}` })
    else if (e.type === 'tool/approval-decided' && call) {
      // The last decision on the action is the one that stood (one decided again after a policy change).
      const decision = { by: e.data.by, ...(e.data.reason !== undefined ? { reason: e.data.reason } : {}) }
      delete call.approved
      delete call.rejected
      call[e.data.approved ? 'approved' : 'rejected'] = decision
    } else if (e.type === 'tool/end' && call && !e.data.dryRun)
      call.result = { output: e.data.output, observation: e.data.observation, receipt: e.data.receipt }
    else if (e.type === 'tool/reconciled' && call && e.data.committed) call.result = { output: e.data.output, receipt: e.data.receipt }
  }
  return [...calls.values()].filter((c) => c.approved || c.rejected || c.result)
}

/** Values that differ in every replay (times, ids made from the run id, tickets, durations) are replaced. */
function reduce(event: RunEvent, runId: string): ReplayedEvent {
  const data = JSON.parse(
    JSON.stringify(event.data, (key, value) => {
      if (['ticket', 'durationMs', 'deadline', 'at', 'expiresAt', 'createdAt'].includes(key)) return undefined
      return typeof value === 'string' && value.includes(runId) ? value.replaceAll(runId, 'RUN') : value
    }),
  )
  return {
    seq: event.seq,
    type: event.type,
    stepId: event.stepId,
    actionId: event.actionId,
    producer: event.producer,
    detail: detailOf(event),
    data,
  }
}

function detailOf(event: RunEvent): string {
  const d = event.data as Record<string, any>
  switch (event.type) {
    case 'tool/proposed':
      return `${d.tool}(${JSON.stringify(d.args)})`
    case 'tool/decision':
      return `${d.verdict} rule=${d.ruleId ?? '-'} ${d.policyVersion ?? ''}${d.reason ? ` — ${d.reason}` : ''}`
    case 'tool/approval-decided':
      return `${d.approved ? 'approved' : 'rejected'} by ${d.by}`
    case 'tool/end':
      return `${d.tool} ${typeof d.observation === 'string' ? d.observation.slice(0, 80) : ''}`
    case 'tool/error':
      return `${d.tool} ${d.code}`
    case 'step/model-response':
      return d.decision.kind === 'final'
        ? `final "${String(d.decision.text).slice(0, 60)}"`
        : d.decision.kind === 'ask_user'
          ? 'asks the user'
          : `calls ${d.decision.calls.map((c: { name: string }) => c.name).join(', ')}`
    case 'verify/end':
      return d.ok ? 'ok' : `failed ${d.code ?? ''}`
    case 'run/paused':
      return d.status
    case 'run/end':
      return `${d.status}${d.code ? ` ${d.code}` : ''}`
    default:
      return ''
  }
}

function outcomeOf(state: RunState): Outcome {
  return {
    status: state.status,
    failureCode: state.failureCode,
    reason: state.reason,
    answer: state.answer,
    steps: state.steps,
    usage: { ...state.usage },
    actions: Object.values(state.actions).map((a) => `${a.id} ${a.tool} ${a.status}`),
  }
}

function outcomeDiff(a: SideResult, b: SideResult): string[] {
  if (!a.outcome || !b.outcome) return a.error || b.error ? ['error'] : []
  const keys = ['status', 'failureCode', 'answer', 'steps', 'usage', 'actions'] as const
  return keys.filter((k) => JSON.stringify(a.outcome![k]) !== JSON.stringify(b.outcome![k]))
}

/** Align the two event lists on (type, step, action) by longest common subsequence, then compare what matched. */
export function align(a: ReplayedEvent[], b: ReplayedEvent[]): DiffRow[] {
  const key = (e: ReplayedEvent) => `${e.type} ${e.stepId ?? ''} ${e.actionId ?? ''}`
  const n = a.length,
    m = b.length
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = key(a[i]) === key(b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  }
  const rows: DiffRow[] = []
  let i = 0,
    j = 0
  while (i < n || j < m) {
    if (i < n && j < m && key(a[i]) === key(b[j])) {
      const fields = differing(a[i], b[j])
      rows.push(fields.length ? { kind: 'changed', a: i, b: j, fields } : { kind: 'same', a: i, b: j })
      i++
      j++
    } else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      rows.push({ kind: 'only-b', b: j++ })
    } else {
      rows.push({ kind: 'only-a', a: i++ })
    }
  }
  return rows
}

function differing(a: ReplayedEvent, b: ReplayedEvent): string[] {
  const fields: string[] = []
  if (a.producer !== b.producer) fields.push('producer')
  const da = (a.data ?? {}) as Record<string, unknown>,
    db = (b.data ?? {}) as Record<string, unknown>
  for (const k of new Set([...Object.keys(da), ...Object.keys(db)])) {
    if (JSON.stringify(da[k]) !== JSON.stringify(db[k])) fields.push(`data.${k}`)
  }
  return fields
}
