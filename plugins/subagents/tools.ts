/**
 * The two tools. spawn_agent is `local` and idempotent: the child's run id is derived from the calling
 * action, so a retry or a resume after a crash re-attaches to the same child instead of starting a
 * second one. handoff changes nothing outside the run; the kernel moves the run once the step is over.
 */
import { z } from 'zod'
import { defineTool, isWaiting, type AgentDirectory, type ChildOutcome, type Tool } from 'cordage'
import type { Config } from './manifest.ts'

export function spawnTool(agents: AgentDirectory, config: Config): Tool {
  const described = agents.list().filter((a) => config.agents.includes(a.name))
  return defineTool({
    name: 'spawn_agent',
    description: `Give a task to another agent and get its answer. Agents: ${described.map((a) => `${a.name}${a.description ? ` (${a.description})` : ''}`).join('; ')}.`,
    input: z.object({ agent: z.enum(config.agents as [string, ...string[]]), task: z.string().min(1) }),
    sideEffect: 'local',
    idempotent: true,
    timeoutMs: config.timeoutMs,
    // What a child may spend, reserved from the parent's pool before the call starts (issue 12):
    // spawns side by side cannot hand out the same remainder twice. The child is capped at it.
    ...(config.childMaxTokens !== undefined || config.childMaxCostUsd !== undefined
      ? {
          cost: {
            ...(config.childMaxTokens !== undefined ? { tokens: config.childMaxTokens } : {}),
            ...(config.childMaxCostUsd !== undefined ? { costUsd: config.childMaxCostUsd } : {}),
          },
        }
      : {}),
    // Each child is its own run: spawns of other tasks may run side by side in one wave (and reserve
    // from the parent's pool together); the same task twice runs one after the other.
    footprint: ({ agent, task }) => ({ reads: [], writes: [`spawn_agent/${agent}/${task}`] }),
    async run({ agent, task }, io) {
      const outcome = await agents.spawn({
        agent,
        task,
        parent: { runId: io.runId, actionId: io.actionId, agent: agents.self },
        maxDepth: config.maxDepth,
        signal: io.signal,
      })
      // The child waits for a person: so does this run, until the child ends; then this call runs again,
      // re-attaches to the child by its derived id, and gets its outcome. Nothing is counted until then.
      // The child is a condition of kind `child`, which the host owns (its `waits` service): it checks
      // that the child is this call's own, cancels it with the parent, and wakes the parent when it ends.
      if (outcome.waiting && isWaiting(outcome.status)) {
        const { actionId, reason } = outcome.waiting
        const on = { kind: 'child', runId: outcome.runId, agent, ...(actionId ? { actionId } : {}) }
        const what = `child run ${outcome.runId} (agent ${agent}), which is ${outcome.status}: ${reason}`
        return { output: outcome, waitsFor: { on, status: outcome.status, reason: what } }
      }
      return {
        output: outcome,
        observation: observe(outcome),
        receipt: { runId: outcome.runId, status: outcome.status },
        usage: { ...outcome.usage, steps: outcome.steps },
      }
    },
  })
}

export function handoffTool(agents: AgentDirectory, config: Config): Tool {
  return defineTool({
    name: 'handoff',
    description: `Pass the conversation to another agent, which continues it from here. Agents: ${config.handoffs.join(', ')}.`,
    input: z.object({ agent: z.enum(config.handoffs as [string, ...string[]]), reason: z.string().min(1) }),
    sideEffect: 'none',
    async run({ agent, reason }, io) {
      await agents.checkHandoff(agent, io.runId)
      return { output: { to: agent }, observation: `Handed over to ${agent}: ${reason}`, handoff: { agent, reason } }
    },
  })
}

function observe(o: ChildOutcome): string {
  const who = `${o.agent} (run ${o.runId})`
  if (o.status === 'COMPLETED') return `${who} answered: ${o.answer}`
  return `${who} did not finish: ${o.status}${o.failureCode ? ` (${o.failureCode})` : ''}${o.reason ? `: ${o.reason}` : ''}`
}
