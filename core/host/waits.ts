/**
 * @module host/waits
 * The `waits` service the host gives each agent (core/contracts/services/waits.ts): who answers for each
 * kind of condition a tool call may wait on, with kind `child` owned here, and the worker's sweep that
 * wakes a run whose condition ended without waking it.
 *
 * A child run (subagents' spawn_agent) is a condition of the call that started it: that call's own while
 * the child's run/start `parent` names the call, going until the child ends. Cancelling it cancels the
 * child; a child that ends wakes its parent; a child whose parent has ended is not approved. All of it
 * through the agents service (host/agents.ts), which reaches only this agent's own children, of agents
 * in its `spawns`.
 */
import type { AgentDirectory, ChildOutcome } from '../contracts/services/agents.ts'
import { WaitKind, type WaitLook, type WaitOwner, type Waiter, type WaitsService } from '../contracts/services/waits.ts'
import type { WaitCondition } from '../contracts/data.ts'
import { CordageError } from '../contracts/errors.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import { readService } from '../kernel/cordis.ts'
import { isTerminal } from '../kernel/status.ts'
import type { AgentsHost } from './agents.ts'

export function waitsService(host: AgentsHost, self: string, agents: AgentDirectory): WaitsService {
  const owners = new Map<string, WaitOwner>([['child', childOwner(host, self, agents)]])
  return {
    owner: (kind) => owners.get(kind),
    own(kind, owner) {
      if (typeof kind !== 'string' || !WaitKind.test(kind))
        throw new CordageError('invalid_input', `a kind of wait is named like ${WaitKind}, got ${JSON.stringify(kind)}`)
      // One owner per kind, and the host's own (child) is not for a plugin to take over.
      if (owners.has(kind)) throw new CordageError('invalid_input', `waits of kind "${kind}" in agent "${self}" have an owner already`)
      owners.set(kind, owner)
      return () => {
        if (owners.get(kind) === owner) owners.delete(kind)
      }
    },
    async runEnded(state) {
      // Best effort, each on its own: one that throws (at once or later) keeps no other from waking its waiters.
      for (const owner of [...owners.values()])
        await Promise.resolve()
          .then(() => owner.runEnded?.(state))
          .catch(() => {})
    },
    async checkAwaited(state) {
      for (const owner of [...owners.values()]) await owner.checkAwaited?.(state)
    },
  }
}

/** A child run as a condition: `{ kind: 'child', runId, agent, actionId? }` (actionId: the child's own call that waits). */
function childOwner(host: AgentsHost, self: string, agents: AgentDirectory): WaitOwner {
  const ref = (on: WaitCondition) =>
    typeof on.runId === 'string' && typeof on.agent === 'string' ? { runId: on.runId, agent: on.agent } : undefined
  /** The child, when it is one `waiter` started; else why not. Throws what the agents service throws (`asked`: says it instead). */
  const find = async (
    on: WaitCondition,
    waiter: Waiter,
    asked = false,
  ): Promise<{ child: { runId: string; agent: string }; found: ChildOutcome } | { says: string }> => {
    const child = ref(on)
    if (!child) return { says: 'a child run is named { kind: child, runId, agent }, with runId and agent strings' }
    let found
    try {
      found = await agents.child(child.agent, child.runId)
    } catch (error) {
      if (!asked) throw error
      return {
        says: `agent "${child.agent}" cannot be asked about run ${child.runId}: ${error instanceof Error ? error.message : String(error)}`,
      }
    }
    if (!found || found.parent?.runId !== waiter.runId || found.parent.actionId !== waiter.actionId)
      return {
        says: `run ${child.runId} of agent "${child.agent}" is not a child started by this call (run ${waiter.runId}, action ${waiter.actionId})`,
      }
    return { child, found }
  }
  return {
    async look(on, waiter): Promise<WaitLook> {
      const mine = await find(on, waiter, true)
      if (!('found' in mine)) return { state: 'unknown', says: mine.says }
      const { child, found } = mine
      const its = `its child run ${child.runId} (agent ${child.agent})`
      if (isTerminal(found.status)) return { state: 'ended', says: `${its} has already ended (${found.status})` }
      const approve =
        found.waiting?.actionId && found.status === 'WAITING_APPROVAL' ? `: cordage approve ${child.runId} ${found.waiting.actionId}` : ''
      const why = found.waiting ? ` (${found.waiting.reason})` : ''
      return {
        state: 'going',
        says: `it waits on ${its}, which is ${found.status}${why}; act on it first${approve}, and this run goes on when it ends`,
      }
    },
    // What the agents service refuses (an agent this one may not start) is thrown: the cancel reports it.
    async cancel(on, waiter) {
      const mine = await find(on, waiter)
      if (!('found' in mine) || isTerminal(mine.found.status)) return
      const { child } = mine
      await agents.cancelChild(child.agent, child.runId, {
        by: `parent:${waiter.runId}`,
        reason: `its parent run ${waiter.runId} was cancelled`,
      })
    },
    // A child that ended wakes its parent, if the parent waits on it.
    async runEnded(state) {
      if (state.parent && isTerminal(state.status)) await agents.childEnded({ runId: state.runId, parent: state.parent })
    },
    // Its parent was cancelled (or ended otherwise) and could not cancel it: nobody waits for what it would do.
    // The parent is looked for in this agent's store (not found, as when the agents keep different stores: this cannot tell).
    async checkAwaited(state) {
      const link = state.parent
      if (!link) return
      const parent = await Promise.resolve()
        .then(() => host.agent(self).load(link.runId))
        .catch(() => undefined)
      if (parent && isTerminal(parent.status))
        throw new CordageError(
          'run_not_waiting',
          `run ${state.runId} is a child of run ${link.runId} (agent ${link.agent}), which has ended ${parent.status}: nobody waits for this child any more, so its actions are not approved; cancel it instead: cordage cancel ${state.runId}`,
        )
    },
  }
}

/**
 * A sweep for `cordage worker`: resume the runs of `agent` whose call waits on a condition that has
 * ended (a child run), in case its end did not wake them (the process that ended it stopped first, or
 * could not load the waiting run's agent). A run whose condition is still going is left as it is. What
 * a waiting run waits on is read once per version of it (its last seq); then each pass only asks the owner.
 */
export function waitSweep(
  agent: AgentRuntime,
  report: (error: CordageError) => void,
  runtimeFor: (runId: string) => Promise<AgentRuntime> = async () => agent,
): () => Promise<number> {
  interface Entry {
    seq: number
    on?: WaitCondition
    waiter?: Waiter
    reported?: boolean
  }
  let known = new Map<string, Entry>()
  const statuses = ['WAITING_APPROVAL', 'WAITING_USER', 'WAITING_RECONCILIATION', 'SUSPENDED'] as const
  const read = async (runId: string, seq: number): Promise<Entry> => {
    const { waiting } = await agent.load(runId)
    return { seq, on: waiting?.on, waiter: { runId, actionId: waiting?.actionId ?? '' } }
  }
  return async () => {
    let woken = 0
    const next = new Map<string, Entry>()
    for (const status of statuses) {
      for (const run of await agent.store().list({ status, agent: agent.name, limit: 1000 })) {
        let entry = known.get(run.runId)
        if (entry?.seq !== run.lastSeq) entry = await read(run.runId, run.lastSeq)
        next.set(run.runId, entry)
        if (!entry.on || entry.reported) continue
        // Still going: nothing to do (and no runtime to build for a pinned run).
        const owner = readService<WaitsService>(agent.ctx, 'waits')?.value.owner(entry.on.kind)
        const look = await Promise.resolve()
          .then(() => owner?.look(entry.on!, entry.waiter!))
          .catch(() => undefined)
        if (look?.state === 'going') continue
        try {
          await (await runtimeFor(run.runId)).resume(run.runId, { by: 'worker' })
          woken++
        } catch (error) {
          if (!CordageError.is(error)) throw error
          // Another worker took it on meanwhile: look again next time. Anything else (drift refused, a
          // condition that is gone) is reported once, until the run changes.
          if (!['run_busy', 'run_not_waiting', 'lease_lost'].includes(error.code)) {
            entry.reported = true
            report(error)
          }
        }
      }
    }
    // Runs no longer waiting are forgotten.
    known = next
    return woken
  }
}
