/**
 * @module run-start
 * The first events of a run: run/start (the agent, its task, the plugins and services it starts with,
 * its budgets and deadline, its parent, its thread), for a later turn of a thread thread/history, and
 * turn/start, from the draft the run/before-start handlers left (core/kernel/run-draft.ts). Refused
 * before anything is recorded when the task is empty or the agent has no store.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunDraft } from '../contracts/phases.ts'
import { turnIdOf } from '../kit/thread-ids.ts'
import type { StartOptions } from './agent-options.ts'
import type { Budgets } from './budget.ts'
import { startBudgets } from '../kit/budgets.ts'
import { requireMeter } from './meter.ts'
import { readService, ServiceNames, type Context } from './cordis.ts'
import type { Recorder } from './recorder.ts'
import { KernelProducer } from './version.ts'

/** What run/start records of the agent. */
export interface StartingAgent {
  readonly ctx: Context
  readonly name: string
  readonly budgets: Budgets
  readonly plugins: Record<string, string>
  readonly hashes: Record<string, string>
}

/** `task`, when it is a non-empty string; `invalid_input` otherwise. */
export function checkTask(task: string | undefined, agent: string, hasDefault: boolean): string {
  if (typeof task === 'string' && task.trim() !== '') return task
  const without = hasDefault ? '' : ` (agent "${agent}" has no default task)`
  throw new CordageError('invalid_input', `a run needs a task: a non-empty string${without}`)
}

/** Which plugin provides each service now: service → name@version. */
export function servicesOf(ctx: Context): Record<string, string> {
  const services: Record<string, string> = {}
  for (const name of ServiceNames) {
    const entry = readService(ctx, name)
    if (entry && entry.provider !== 'unknown') services[name] = entry.provider
  }
  return services
}

/** What run/start will record before the run/before-start handlers see it. */
export function startDraft(agent: StartingAgent, task: string, options: StartOptions): RunDraft {
  const budgets = startBudgets(agent.budgets, options.budgets)
  // Tokens and cost are bounded by the meter: without one, the run is refused rather than left unbounded.
  requireMeter(agent.name, readService(agent.ctx, 'meter'), budgets)
  return { task, budgets, ...(options.thread !== undefined ? { threadAsked: options.thread } : {}) }
}

export function recordRunStart(rec: Recorder, agent: StartingAgent, draft: RunDraft, options: StartOptions): void {
  const services = servicesOf(agent.ctx)
  if (!services.store)
    throw new CordageError(
      'service_missing',
      `agent "${agent.name}" has no store: add a plugin that provides "store" (for example store-sqlite)`,
    )
  const { task, budgets, thread } = draft
  rec.record(
    'run/start',
    {
      agent: agent.name,
      task,
      plugins: { ...agent.plugins },
      hashes: Object.keys(agent.hashes).length ? { ...agent.hashes } : undefined,
      services,
      budgets,
      deadline: budgets.deadlineMs !== undefined ? Date.now() + budgets.deadlineMs : undefined,
      parent: options.parent,
      ...(options.overrides && Object.keys(options.overrides).length ? { overrides: { ...options.overrides } } : {}),
      ...(thread ? { thread } : {}),
    },
    KernelProducer,
  )
  if (draft.claim) rec.threadClaim = draft.claim
  if (draft.history) rec.record('thread/history', draft.history, KernelProducer)
  rec.record('turn/start', { input: task }, KernelProducer, { turnId: turnIdOf(thread?.turn ?? 1) })
}
