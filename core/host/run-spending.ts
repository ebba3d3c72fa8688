/**
 * @module host/run-spending
 * What a run and every run it started spent, read from their logs (the agents service's `spent`,
 * core/contracts/services/agents.ts): a thread's budgets count a turn's children whatever became of
 * the call that started them (plugins/threads). A child of action `a` of run `R` is run
 * `R.a` (childRunId): it is looked for in the store the parent was read from, then in the stores of
 * the agents that drove the parent may start (a child may live in its own agent's store). A run found
 * there belongs to the tree only if its run/start names that very parent and action.
 */
import type { Usage } from '../contracts/data.ts'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import { childRunId, type RunSpending } from '../contracts/services/agents.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import { isTerminal } from '../kernel/status.ts'
import { recordedSpending, withChildren, type RecordedSpending } from './recorded-spending.ts'

/** What the walk needs of the host (core/host/agents.ts AgentsHost has it). */
export interface SpendingHost {
  preset: { agents: Record<string, { spawns: string[] }> }
  agent(name: string): AgentRuntime
  ensureAgent(name: string): Promise<AgentRuntime>
}

/** What run `runId` of agent `self` and its tree spent; `invalid_input` for a run `self` did not start. */
export async function spentByRun(host: SpendingHost, self: string, runId: string): Promise<RunSpending> {
  const reader = host.agent(self)
  const run = recordedSpending(await reader.store().load(runId))
  if (run.agents[0] !== self)
    throw new CordageError('invalid_input', `agent "${self}" did not start run ${runId}: it can say only what its own runs spent`)
  const open: RunSpending['open'] = []
  const usage = await walk(host, reader, runId, run, open)
  return { usage, open }
}

async function walk(
  host: SpendingHost,
  reader: AgentRuntime,
  runId: string,
  run: RecordedSpending,
  open: RunSpending['open'],
): Promise<Usage> {
  if (!isTerminal(run.status)) open.push({ runId, agent: run.agents.at(-1) ?? reader.name, status: run.status })
  const children = new Map<string, Usage>()
  for (const actionId of run.started) {
    const found = await findChild(host, reader, run.agents, { runId, actionId })
    if (found) children.set(actionId, await walk(host, found.reader, found.runId, found.run, open))
  }
  return withChildren(run, children)
}

/** The child run of `parent`'s action, from the first store that holds it; undefined when none does. */
async function findChild(
  host: SpendingHost,
  reader: AgentRuntime,
  drivers: readonly string[],
  parent: { runId: string; actionId: string },
): Promise<{ reader: AgentRuntime; runId: string; run: RecordedSpending } | undefined> {
  const runId = childRunId(parent.runId, parent.actionId)
  const spawnable = new Set(drivers.flatMap((d) => (Object.hasOwn(host.preset.agents, d) ? host.preset.agents[d].spawns : [])))
  const readers: (() => Promise<AgentRuntime>)[] = [async () => reader, ...[...spawnable].map((name) => () => host.ensureAgent(name))]
  const tried = new Set<AgentRuntime>()
  for (const next of readers) {
    const candidate = await next()
    if (tried.has(candidate)) continue
    tried.add(candidate)
    const events = await loadIfAny(candidate, runId)
    if (!events) continue
    const run = recordedSpending(events)
    if (run.parent?.runId === parent.runId && run.parent.actionId === parent.actionId) return { reader: candidate, runId, run }
  }
  return undefined
}

async function loadIfAny(agent: AgentRuntime, runId: string): Promise<RunEvent[] | undefined> {
  try {
    return await agent.store().load(runId)
  } catch (error) {
    if (CordageError.is(error, 'run_not_found')) return undefined
    throw error
  }
}
