/**
 * @module services/agents
 * The `agents` contract: the other agents of the preset, as a plugin may reach them. The host provides
 * it to every agent (no plugin does), so a plugin such as `subagents` can start a nested run of another
 * agent or hand the current run over to one, without importing the host.
 *
 * A child run is an ordinary run of the other agent: its own plugins, its own policy and approvals,
 * its own events, with `parent` in its run/start. What it may spend is what its parent has left, and
 * what it spent is added to the parent (through the tool result's `usage`).
 */
import type { Code } from '../errors.ts'
import type { Budgets, ParentLink, Reservation, RunStatus, Usage } from '../data.ts'
export type { ParentLink } from '../data.ts'

export const AgentsContract = '1.3.0'

export interface SpawnRequest {
  /** The agent to run, by its name in the preset. */
  agent: string
  task: string
  /** The run and action asking; the child's id is derived from them, so asking again re-attaches. */
  parent: { runId: string; actionId: string; agent: string }
  /** Refuse when the child would be deeper than this (1: children, but no grandchildren). */
  maxDepth: number
  /** Aborting it cancels the child run. */
  signal: AbortSignal
}

/** What became of a child run: ended, or waiting (for approval, the user or a person to reconcile). */
export interface ChildOutcome {
  runId: string
  agent: string
  status: RunStatus
  answer?: string
  failureCode?: Code
  reason?: string
  /** What it waits for, when it waits. */
  waiting?: { actionId?: string; reason: string }
  /** The run and call that started it (run/start's `parent`). Since 1.2.0. */
  parent?: ParentLink
  /** Steps and usage of the child (its own children included), to be counted against the parent. */
  steps: number
  usage: Usage
}

/** What a run and every run it started spent, read from their logs. Since 1.3.0. */
export interface RunSpending {
  /** The run's own model calls and compactions, each call's reported usage, and each child's spending (the larger of the two per call). */
  usage: Usage
  /** Runs of the tree that have not ended (their spending is not final), with the agent that drives each. */
  open: { runId: string; agent: string; status: RunStatus }[]
}

export interface AgentDirectory {
  /** The agent this directory belongs to (the one asking). */
  readonly self: string
  /** The agents of the preset, other than the caller, with their descriptions. */
  list(): { name: string; description?: string }[]
  /**
   * Whom the preset lets this agent reach (its `spawns` and `handoffs`): `spawn` and `checkHandoff`
   * refuse anyone else, and the kernel drops a handoff to anyone else. Since 1.1.0.
   */
  reach(): { spawns: string[]; handoffs: string[] }
  /**
   * Run `task` on another agent as a child of the calling run, and wait until it ends or waits.
   *
   * Contract: the child's budgets are its own, capped by what the parent has left (steps, tokens,
   * cost, deadline). The child's id is a function of the parent run and action: a second call for the
   * same action (after a crash) finds the child and re-attaches to it instead of starting another.
   * Throws `agent_not_found` for an unknown agent, `invalid_input` for one the preset does not list in
   * this agent's `spawns`, past `maxDepth`, or when `parent.actionId` is not a call running in the
   * parent run now (a child belongs to the call that asks for it).
   */
  spawn(request: SpawnRequest): Promise<ChildOutcome>
  /**
   * Check that run `runId` can be handed to `agent` (a tool then returns `handoff`; once the step is
   * over the run is driven by that agent, recorded as run/handoff). Contract: the target must see the
   * run in its store. Throws `agent_not_found`, or `invalid_input` when its store does not have the run.
   */
  checkHandoff(agent: string, runId: string): Promise<void>
  /**
   * The kernel's side of a run that waits on a child run (`waiting.child`: a call of it returned
   * `waitsFor`). Since 1.2.0.
   *
   * Both reach only this agent's own children: `agent` must be one it may start (the preset's
   * `spawns`), and the run's parent must be this agent; a plugin cannot read or cancel other runs
   * through them.
   *
   * `child`: what became of run `runId` of `agent`, undefined when that agent's store has no such run
   *   or the run is not a child of this agent.
   * `cancelChild`: cancel it (its parent is being cancelled; its pending approval becomes void);
   *   refused (`invalid_input`) for a run that is not this agent's child.
   * `childEnded`: run `child`, of this agent, has ended; its parent, if it waits on it, is resumed here
   * (resolves once that resume is recorded, or at once when the parent does not wait on it).
   */
  child(agent: string, runId: string): Promise<ChildOutcome | undefined>
  cancelChild(agent: string, runId: string, actor: { by: string; reason?: string }): Promise<void>
  childEnded(child: { runId: string; parent: ParentLink }): Promise<void>
  /**
   * What run `runId`, started by this agent, spent, with every run it started (children, theirs, ...),
   * whatever their status, each read from its own log: a child whose call never reported it (cut short
   * by a cancel or a crash, or waiting on it) counts all the same. The threads plugin sums a thread's
   * turns with it (plugins/threads). A child of action `a` is run `<runId>.<a>` (see `spawn`), looked
   * for in this agent's store, then in those of the agents it may start. Throws `invalid_input` for a
   * run this agent did not start, and what a store throws for a log it cannot read. Since 1.3.0.
   */
  spent?(runId: string): Promise<RunSpending>
}

declare module 'cordis' {
  interface Context {
    agents: AgentDirectory
  }
}

/** A child run's id: a function of the parent run and the action that starts it, so asking again re-attaches (`spawn`). */
export function childRunId(parentRunId: string, actionId: string): string {
  return `${parentRunId}.${actionId}`
}

/**
 * Budgets of a child: its own, but never more than its parent has left, and, when the call that starts
 * it reserved budget (`actionId`'s open reservation, issue 12), never more than that reservation.
 */
export function childBudgets(
  own: Partial<Budgets>,
  parent: {
    budgets: Budgets
    steps: number
    nestedSteps?: number
    usage: Usage
    deadline?: number
    reservations?: readonly Reservation[]
    /** Set when the parent is a turn of a thread: the thread's budgets hold over the child too. */
    thread?: { usedBefore: Usage }
  },
  now: number,
  actionId?: string,
): Partial<Budgets> {
  const out: Partial<Budgets> = { ...own }
  const stepsLeft = Math.max(0, parent.budgets.maxSteps - parent.steps - (parent.nestedSteps ?? 0))
  out.maxSteps = Math.min(own.maxSteps ?? stepsLeft, stepsLeft)
  if (parent.budgets.maxTokens !== undefined) {
    const left = Math.max(0, parent.budgets.maxTokens - parent.usage.inputTokens - parent.usage.outputTokens)
    out.maxTokens = Math.min(own.maxTokens ?? left, left)
  }
  if (parent.budgets.maxCostUsd !== undefined) {
    const left = Math.max(0, parent.budgets.maxCostUsd - parent.usage.costUsd)
    out.maxCostUsd = Math.min(own.maxCostUsd ?? left, left)
  }
  // A turn of a thread: what the thread's budgets have left caps the child as well (issue 12 red-team).
  const thread = parent.budgets.thread
  if (thread && parent.thread) {
    const used = parent.thread.usedBefore
    if (thread.maxTokens !== undefined) {
      const left = Math.max(
        0,
        thread.maxTokens - used.inputTokens - used.outputTokens - parent.usage.inputTokens - parent.usage.outputTokens,
      )
      out.maxTokens = Math.min(out.maxTokens ?? left, left)
    }
    if (thread.maxCostUsd !== undefined) {
      const left = Math.max(0, thread.maxCostUsd - used.costUsd - parent.usage.costUsd)
      out.maxCostUsd = Math.min(out.maxCostUsd ?? left, left)
    }
  }
  const reserved = actionId === undefined ? undefined : parent.reservations?.find((r) => r.kind === 'tool' && r.actionId === actionId)
  if (reserved && reserved.tokens > 0) out.maxTokens = Math.min(out.maxTokens ?? reserved.tokens, reserved.tokens)
  if (reserved && reserved.costUsd > 0) out.maxCostUsd = Math.min(out.maxCostUsd ?? reserved.costUsd, reserved.costUsd)
  if (parent.deadline !== undefined) {
    const left = Math.max(1, parent.deadline - now)
    out.deadlineMs = Math.min(own.deadlineMs ?? left, left)
  }
  return out
}
