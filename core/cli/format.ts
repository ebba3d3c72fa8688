/**
 * @module cli/format
 * One readable line per run event: seq, type, the ids that apply, and the few fields a person reading
 * a run wants. `--json` prints the events themselves instead.
 */
import type { RunEvent, RunEventType } from '../contracts/events.ts'
import type { RunSummary } from '../contracts/services/store.ts'
import type { ApprovalGrant } from '../contracts/data.ts'
import type { RunState } from '../kernel/state.ts'
import type { Parsed } from './args.ts'
import { hint } from './hints.ts'
import { Self } from './self.ts'

export function formatEvent(event: RunEvent, color = false): string {
  const id = event.actionId ?? event.stepId ?? event.turnId ?? ''
  const head = `${String(event.seq).padStart(4)} ${event.type.padEnd(24)} ${id.padEnd(6)}`
  const line = `${head} ${detail(event)}`.trimEnd()
  if (!color) return line
  const tint =
    event.type === 'run/end'
      ? event.data.status === 'COMPLETED'
        ? 32
        : 31
      : event.type === 'tool/error' || event.type === 'step/model-error'
        ? 31
        : event.type === 'tool/decision'
          ? event.data.verdict === 'allow'
            ? 32
            : event.data.verdict === 'ask'
              ? 33
              : 31
          : event.type === 'run/paused' || event.type === 'guard/tripped'
            ? 33
            : 0
  return tint ? `\u001b[${tint}m${line}\u001b[0m` : line
}

/**
 * A drift decision. A refusal is the harness's, never that of whoever gave the command (it reads as if
 * the approver refused otherwise): the line names the harness, whose command was not carried out, and
 * how to go on.
 */
function formatDrift(d: RunEvent<'run/version-drift'>['data']): string {
  const changes = d.changes.map((c) => `${c.plugin} ${c.from ?? '-'} → ${c.to ?? '-'}`).join(', ')
  const command = d.command === 'worker' ? "a worker's takeover" : d.command ? `${d.by}'s ${d.command}` : `the command of ${d.by}`
  if (d.decision === 'refused') {
    const next =
      d.command === 'worker'
        ? 'the run is suspended; to go on, resume it with --accept-drift'
        : 'to go on, give it again with --accept-drift'
    const who = d.command === 'worker' ? '' : `, not by ${d.by}`
    return `refused by the harness${who}: plugins changed since the run started (${changes}); ${command} was not carried out; ${next}`
  }
  return `${d.decision === 'pinned' ? 'pinned to the recorded versions' : 'accepted'} at ${command}: ${changes}`
}

/** One line of detail per event type (the type makes it exhaustive). */
const Details: { readonly [K in RunEventType]: (event: RunEvent<K>) => string } = {
  'run/start': (event) =>
    `${event.data.parent ? `child of ${event.data.parent.runId} ${event.data.parent.actionId} ` : ''}agent=${event.data.agent} task=${quote(event.data.task, 60)} plugins=${Object.entries(
      event.data.plugins,
    )
      .map(([n, v]) => `${n}@${v}`)
      .join(',')}`,
  'run/checkpoint': (event) => `reason=${event.data.reason} pending=${event.data.pending.join(',') || '-'}`,
  'run/paused': (event) => `${event.data.status}${event.data.code ? ` (${event.data.code})` : ''} ${event.data.reason}`,
  'run/resumed': (event) => `from=${event.data.from} by=${event.data.by}${event.data.input ? ` input=${quote(event.data.input, 40)}` : ''}`,
  'run/cancel-requested': (event) => `by=${event.data.by}${event.data.reason ? ` reason=${quote(event.data.reason, 60)}` : ''}`,
  'run/recovered': (event) =>
    `by worker ${event.data.worker} (lease ${event.data.token})${event.data.previous ? `, after ${event.data.previous}` : ''}`,
  'run/handoff': (event) => `${event.data.from} → ${event.data.to}${event.data.reason ? ` — ${quote(event.data.reason, 60)}` : ''}`,
  'run/version-drift': (event) => formatDrift(event.data),
  'run/end': (event) => {
    const d = event.data
    const named = (list: { actionId: string; tool: string; receipt?: unknown; key?: string }[]) =>
      list.length
        ? ` (${list
            .slice(0, 3)
            .map(
              (e) =>
                `${e.actionId} ${e.tool}${e.receipt !== undefined ? ` ${typeof e.receipt === 'string' ? quote(e.receipt, 30) : compact(e.receipt, 30)}` : e.key ? ` key=${e.key}` : ''}`,
            )
            .join(', ')}${list.length > 3 ? ', …' : ''})`
        : ''
    const effects = d.effects
      ? ` effects: ${d.effects.committed.length} committed after cancel${named(d.effects.committed)}, ${d.effects.unknown.length} unknown${named(d.effects.unknown)}`
      : ''
    return `${d.status}${d.failureCode ? ` ${d.failureCode}` : ''} steps=${d.steps}${d.nestedSteps ? ` (+${d.nestedSteps} by subagents)` : ''} tokens=${d.usage.inputTokens + d.usage.outputTokens} cost=$${d.usage.costUsd.toFixed(4)}${d.reason && d.status !== 'COMPLETED' ? ` — ${d.reason}` : ''}${effects}`
  },
  'turn/start': (event) => quote(event.data.input, 80),
  'turn/end': (event) => (event.data.answer ? quote(event.data.answer, 80) : ''),
  'step/start': (event) => `#${event.data.index}`,
  'step/context': (event) =>
    `${event.data.messages} messages ~${event.data.tokens} tokens, tools: ${event.data.tools.join(', ') || 'none'}`,
  'step/no-progress': (event) => `${event.data.response} (${event.data.detector}): ${event.data.reason}`,
  'slice/update': (event) =>
    [
      ...Object.keys(event.data.set ?? {}).map((k) => `set ${k}`),
      ...Object.entries(event.data.push ?? {}).map(([k, v]) => `push ${k} +${v.length}`),
      ...Object.entries(event.data.add ?? {}).map(([k, v]) => `add ${k} +${v.length}`),
    ].join(', '),
  'compaction/start': (event) => `${event.data.strategy}: ${event.data.tokens} tokens, limit ${event.data.limit}`,
  'thread/history': (event) => `from ${event.data.from}: ${event.data.turns} turn(s), ${event.data.entries.length} entries`,
  'budget/reserved': (event) =>
    event.data.reservations.map((r) => `${r.actionId ?? r.kind} ${r.tokens} tokens $${r.costUsd.toFixed(4)}`).join(', '),
  'budget/settled': (event) =>
    `${event.data.reservation.actionId ?? event.data.reservation.kind} reserved ${event.data.reservation.tokens} tokens, used ${event.data.actual.tokens}`,
  'compaction/end': (event) =>
    event.data.rejected
      ? `${event.data.strategy}: rejected, ${event.data.rejected}`
      : `${event.data.strategy}: ${event.data.before} → ${event.data.after} tokens, ${event.data.kept} messages kept, ${event.data.extends === undefined ? `${event.data.summarised.length} summarised` : `${event.data.summarised.length} more summarised than at seq ${event.data.extends}`}`,
  'step/model-request': (event) => `${event.data.model}${event.data.attempt > 1 ? ` attempt ${event.data.attempt}` : ''}`,
  'step/model-error': (event) =>
    `${event.data.code}${event.data.errorClass !== event.data.code ? ` (${event.data.errorClass})` : ''}${event.data.retryInMs !== undefined ? ` retry in ${event.data.retryInMs} ms` : ''}: ${event.data.message}`,
  'step/model-response': (event) => {
    const d = event.data.decision
    const what =
      d.kind === 'final'
        ? `final ${quote(d.text, 70)}`
        : d.kind === 'ask_user'
          ? `ask ${quote(d.question, 70)}`
          : `calls ${d.calls.map((c) => `${c.name}(${compact(c.args, 40)})`).join(', ')}`
    return `${what}  [${event.data.usage.inputTokens}/${event.data.usage.outputTokens} tokens]`
  },
  'step/end': (event) => `${event.data.actions} action(s)`,
  'tool/proposed': (event) => `${event.data.tool}(${compact(event.data.args, 60)})${event.data.dryRun ? ' dry run' : ''}`,
  'tool/decision': (event) =>
    `${event.data.verdict} rule=${event.data.ruleId} policy=${event.data.policyVersion}${event.data.constraints ? ` constraints=${compact(event.data.constraints, 60)}` : ''} — ${event.data.reason}`,
  'tool/approval-requested': (event) => {
    const p = event.data.preview
    const shown =
      p?.status === 'ok'
        ? ` preview: ${quote(p.preview.summary, 60)}`
        : p?.status === 'failed'
          ? ` preview failed: ${p.code}`
          : p?.status === 'unavailable'
            ? ' no preview'
            : ''
    const redacted = p && p.status !== 'unavailable' && p.redacted ? ` (redacted by ${p.redacted.guard})` : ''
    return `${event.data.tool}(${compact(event.data.args, 50)}) rule=${event.data.ruleId}${shown}${redacted}`
  },
  'tool/approval-decided': (event) =>
    `${event.data.approved ? 'approved' : 'rejected'} by ${event.data.by}${event.data.scope && event.data.scope !== 'once' ? ` (${event.data.scope}${event.data.grant ? ` ${event.data.grant.id}` : ''})` : ''}${event.data.reason ? ` — ${event.data.reason}` : ''}`,
  'tool/start': (event) => `${event.data.tool} attempt ${event.data.attempt} ticket=${event.data.ticket} timeout=${event.data.timeoutMs}ms`,
  'tool/end': (event) =>
    `${event.data.tool} ${event.data.durationMs}ms${event.data.deduplicated ? ` (already done by ${event.data.deduplicated.runId} ${event.data.deduplicated.actionId})` : ''}${event.data.dryRun ? ' dry run' : ''}${event.data.artifact ? ` → ${event.data.artifact.ref} (${event.data.artifact.bytes} B)` : ''}${event.data.redacted ? ` (redacted by ${event.data.redacted.guard})` : ''} ${quote(event.data.observation, 70)}`,
  'tool/reconciled': (event) =>
    `${event.data.tool} ${event.data.committed ? 'committed' : 'not committed'} (by ${event.data.by}) key=${event.data.key}${event.data.redacted ? ` (redacted by ${event.data.redacted.guard})` : ''}`,
  'tool/error': (event) =>
    `${event.data.tool} ${event.data.code} (${event.data.errorClass})${event.data.willRetry ? ' will retry' : ''}${event.data.dryRun ? ' dry run' : ''}${event.data.redacted ? ` (redacted by ${event.data.redacted.guard})` : ''}: ${quote(event.data.message, 70)}${
      event.data.stack
        ? `\n${event.data.stack
            .split('\n')
            .slice(1)
            .map((l) => `          ${l.trim()}`)
            .join('\n')}`
        : ''
    }`,
  'guard/tripped': (event) => `${event.data.stage} ${event.data.action} by ${event.data.guard}: ${quote(event.data.reason, 70)}`,
  'verify/start': (event) => quote(event.data.answer, 70),
  'verify/end': (event) =>
    event.data.ok
      ? `ok evidence: ${event.data.evidence.map((e) => e.ref).join(', ') || 'none'}`
      : `${event.data.code}${event.data.repair ? ` (the model is told: ${quote(event.data.feedback ?? event.data.reason ?? '', 60)})` : ''}: ${quote(event.data.reason ?? '', 100)}`,
}

function detail(event: RunEvent): string {
  return (Details[event.type] as (event: RunEvent) => string)(event)
}

export function formatSummary(run: RunSummary): string {
  return `${run.runId}  ${run.status.padEnd(22)} ${(run.failureCode ?? '').padEnd(20)} ${run.agent.padEnd(12)} ${new Date(run.updatedAt).toISOString()}  ${quote(run.task, 50)}${run.threadId ? `  (thread ${run.threadId} turn ${run.turn})` : ''}${run.owner ? `  (driven by ${run.owner})` : ''}`
}

/**
 * What a waiting run waits on, and whose child it is, as indented lines (after its summary or status):
 * the chain from a parent to the approval its child waits for. The approve hint loads the preset of
 * `flags` wherever it is run (cli/hints.ts).
 */
export function formatWaiting(run: Pick<RunState, 'runId' | 'waiting' | 'parent'>, flags: Parsed['flags'], self = Self): string {
  const lines: string[] = []
  const w = run.waiting
  if (w?.child)
    lines.push(
      `  waits on child run ${w.child.runId} (agent ${w.child.agent}${w.child.actionId ? `, action ${w.child.actionId}` : ''}), started by its call ${w.actionId}`,
    )
  else if (w?.on) {
    // Another kind of condition (services.md#waits): its reason, and how its owner names it.
    const { kind, ...fields } = w.on
    const named = Object.entries(fields).map(([k, v]) => `${k} ${v}`)
    lines.push(`  waits outside the run: ${w.reason} (${[kind, ...named].join(', ')})`)
  } else if (w?.actionId && w.status === 'WAITING_APPROVAL')
    lines.push(`  approval of action ${w.actionId}: ${hint('approve', [run.runId, w.actionId], flags, '', self)}`)
  if (run.parent) lines.push(`  child of run ${run.parent.runId} (agent ${run.parent.agent}, call ${run.parent.actionId})`)
  return lines.length ? `\n${lines.join('\n')}` : ''
}

function quote(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ')
  return json(flat.length > max ? flat.slice(0, max - 1) + '…' : flat) ?? '""'
}

function compact(value: unknown, max: number): string {
  const text = json(value) ?? ''
  return text.length > max ? text.slice(0, max - 1) + '…' : text
}

/** One line of `cordage grants`. */
export function formatGrant(grant: ApprovalGrant): string {
  const args =
    grant.args === 'any'
      ? 'any arguments'
      : 'hash' in grant.args
        ? `arguments ${grant.args.hash.slice(7, 15)} only`
        : `arguments ${JSON.stringify(grant.args.pattern)}`
  const state =
    grant.revokedAt !== undefined
      ? ` REVOKED by ${grant.revokedBy}`
      : grant.expiresAt !== undefined
        ? grant.expiresAt <= Date.now()
          ? ' EXPIRED'
          : ` until ${new Date(grant.expiresAt).toISOString()}`
        : ''
  return `${grant.id}  ${grant.agent}  ${grant.tool}  ${args}  by ${grant.by}  policy ${grant.policyVersion}${state}`
}

/** JSON, with DEL and C1 escaped too (JSON.stringify leaves them raw): model text reaches a terminal here. */
function json(value: unknown): string | undefined {
  return JSON.stringify(value)?.replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
