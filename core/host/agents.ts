/**
 * @module host/agents
 * The `agents` service the host gives each agent (core/contracts/services/agents.ts): the preset's other agents,
 * child runs (subagents) and handoffs. One directory per agent, so it knows who is asking.
 */
import {
  childBudgets,
  childRunId,
  type AgentDirectory,
  type ChildOutcome,
  type ParentLink,
  type SpawnRequest,
} from '../contracts/services/agents.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../kernel/state.ts'
import { isTerminal, isWaiting } from '../kernel/status.ts'
import type { Preset } from './preset.ts'
import { spentByRun } from './run-spending.ts'

export interface AgentsHost {
  preset: Preset
  /** A loaded agent's runtime (throws agent_not_found). */
  agent(name: string): AgentRuntime
  /** An agent of the preset, loaded now if this process had not loaded it (`cordage run --agent X` loads only X). */
  ensureAgent(name: string): Promise<AgentRuntime>
  /** The runtime a run goes on with: the agent's, or one pinned to the run's versions (onDrift: pin). */
  forRun?(agent: string, runId: string): Promise<AgentRuntime>
}

export { childRunId }

export function agentDirectory(host: AgentsHost, self: string): AgentDirectory {
  const known = async (name: string) => {
    if (name === self || !Object.hasOwn(host.preset.agents, name)) {
      const others = Object.keys(host.preset.agents).filter((n) => n !== self)
      throw new CordageError(
        'agent_not_found',
        `agent "${self}" cannot reach agent "${name}": ${name === self ? 'it is itself' : 'the preset has no such agent'}; others: ${others.join(', ') || 'none'}`,
      )
    }
    return host.ensureAgent(name)
  }
  const spec = () => host.preset.agents[self]
  /** The preset says whom this agent may reach: `spawns` and `handoffs` of its entry; nobody else. */
  const allowed = (key: 'spawns' | 'handoffs', name: string) => {
    const list = spec()[key]
    if (!list.includes(name)) {
      throw new CordageError(
        'invalid_input',
        `agent "${self}" may not ${key === 'spawns' ? 'start' : 'hand a run to'} agent "${name}": the preset's agents.${self}.${key} lists ${list.length ? list.join(', ') : 'none'}; add "${name}" there if it should`,
      )
    }
  }
  return {
    self,
    list: () =>
      Object.values(host.preset.agents)
        .filter((a) => a.name !== self)
        .map((a) => ({ name: a.name, description: a.description })),
    reach: () => ({ spawns: [...spec().spawns], handoffs: [...spec().handoffs] }),

    async spawn(request: SpawnRequest): Promise<ChildOutcome> {
      if (request.parent.agent !== self)
        throw new CordageError('invalid_input', `agent "${self}" cannot start a child for agent "${request.parent.agent}"`)
      allowed('spawns', request.agent)
      const target = await known(request.agent)
      const parent = await host.agent(self).load(request.parent.runId)
      const depth = childDepth(parent, request)
      const runId = childRunId(request.parent.runId, request.parent.actionId)
      let state = await existing(target, runId)
      let done: Promise<RunState> | undefined
      if (!state) {
        done = target.start(request.task, {
          runId,
          budgets: childBudgets(target.budgets, parent, Date.now(), request.parent.actionId),
          parent: { ...request.parent, depth },
        }).done
      } else if (state.status === 'RUNNING' || state.status === 'CANCELLING') {
        // Its driver stopped (the process that ran it died, like ours did): take it over. If another
        // worker still drives it, wait for it there.
        done = reattach(target, runId, request.signal)
      }
      if (done) state = await untilChildEnds(target, runId, done, request)
      return outcomeOf(state!, request.agent)
    },

    // Only this agent's own children, of agents it may start: a plugin of one agent must not read or
    // cancel another's runs (a tool's `waitsFor` names any run it likes; host/waits.ts owns child waits).
    async child(agent: string, runId: string): Promise<ChildOutcome | undefined> {
      allowed('spawns', agent)
      const state = await existing(await known(agent), runId)
      return state && state.parent?.agent === self ? outcomeOf(state, agent) : undefined
    },

    async cancelChild(agent: string, runId: string, actor: { by: string; reason?: string }): Promise<void> {
      allowed('spawns', agent)
      const target = await known(agent)
      const state = await existing(target, runId)
      if (!state || state.parent?.agent !== self) {
        throw new CordageError(
          'invalid_input',
          `agent "${self}" cannot cancel run ${runId} of agent "${agent}": it is not a child of agent "${self}"`,
        )
      }
      // The actor says which parent run asks (`parent:RUN`, as the kernel names it): it must be the child's.
      const asking = /^parent:(.+)$/.exec(actor.by)?.[1]
      if (asking !== undefined && asking !== state.parent.runId) {
        throw new CordageError(
          'invalid_input',
          `run ${asking} cannot cancel run ${runId} of agent "${agent}": its parent is run ${state.parent.runId}`,
        )
      }
      if (!isTerminal(state.status)) await target.cancel(runId, actor)
    },

    async childEnded(child: { runId: string; parent: ParentLink }): Promise<void> {
      // The parent is another agent's run; it goes on only if it waits on this very child.
      const parentAgent = await known(child.parent.agent)
      const parent = await existing(parentAgent, child.parent.runId)
      const on = parent?.waiting?.on
      if (!parent || !isWaiting(parent.status) || on?.kind !== 'child' || on.runId !== child.runId) return
      // As `cordage resume` would: on the runtime pinned for the run when its preset entry says onDrift: pin.
      const runtime = host.forRun ? await host.forRun(parentAgent.name, parent.runId) : parentAgent
      await runtime.resume(parent.runId, { by: `child ${child.runId}` })
    },

    spent: (runId: string) => spentByRun(host, self, runId),

    async checkHandoff(agent: string, runId: string): Promise<void> {
      allowed('handoffs', agent)
      const target = await known(agent)
      if (!(await existing(target, runId))) {
        throw new CordageError(
          'invalid_input',
          `agent "${agent}" does not see run ${runId} in its store; a handoff needs both agents on one store (for example the same store-sqlite file)`,
        )
      }
    },
  }
}

/** Drive a child whose driver is gone, or wait while another worker drives it, until it ends or waits. */
async function reattach(target: AgentRuntime, runId: string, signal: AbortSignal): Promise<RunState> {
  for (;;) {
    const state = await target.load(runId)
    if ((state.status !== 'RUNNING' && state.status !== 'CANCELLING') || signal.aborted) return state
    try {
      return await (await target.resume(runId)).done
    } catch (error) {
      // Driven elsewhere (or it just ended or paused there): look again.
      if (!CordageError.is(error, 'run_busy') && !CordageError.is(error, 'run_not_waiting')) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function existing(agent: AgentRuntime, runId: string): Promise<RunState | undefined> {
  try {
    return await agent.load(runId)
  } catch (error) {
    if (CordageError.is(error, 'run_not_found')) return undefined
    throw error
  }
}

function outcomeOf(state: RunState, agent: string): ChildOutcome {
  return {
    runId: state.runId,
    agent,
    status: state.status,
    answer: state.answer,
    failureCode: state.failureCode,
    reason: state.reason,
    waiting: !isTerminal(state.status) && state.waiting ? { actionId: state.waiting.actionId, reason: state.waiting.reason } : undefined,
    parent: state.parent,
    steps: state.steps + state.nestedSteps,
    usage: { ...state.usage },
  }
}

/**
 * How deep a child of `parent` would be, refused beyond `maxDepth`; and the call asking for it must be
 * running in the parent now (a resumed parent's call runs again, and re-attaches to its child).
 */
function childDepth(parent: RunState, request: SpawnRequest): number {
  const depth = (parent.parent?.depth ?? 0) + 1
  if (depth > request.maxDepth) {
    throw new CordageError(
      'invalid_input',
      `a child of run ${request.parent.runId} would be ${depth} levels deep; at most ${request.maxDepth} are allowed (maxDepth)`,
    )
  }
  // A child belongs to the tool call that asks for it: that call must be running in the parent now
  // (a resumed parent's call runs again, and re-attaches to its child).
  const asking = Object.hasOwn(parent.actions, request.parent.actionId) ? parent.actions[request.parent.actionId] : undefined
  if (asking?.status !== 'running') {
    throw new CordageError(
      'invalid_input',
      `run ${request.parent.runId} has no call ${request.parent.actionId} running now; a child run is started by the call that asks for it`,
    )
  }
  return depth
}

/** The child's outcome; cancelling the parent (its call's signal) cancels the child. */
async function untilChildEnds(target: AgentRuntime, runId: string, done: Promise<RunState>, request: SpawnRequest): Promise<RunState> {
  const cancel = () => {
    target.cancel(runId, { by: `parent:${request.parent.runId}`, reason: 'the parent run was cancelled' }).catch(() => {})
  }
  if (request.signal.aborted) cancel()
  request.signal.addEventListener('abort', cancel, { once: true })
  try {
    return await done
  } finally {
    request.signal.removeEventListener('abort', cancel)
  }
}
