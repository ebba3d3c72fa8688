/**
 * @module eval/replay
 * What keeps an evaluation away from real side effects: one layer for `cordage eval` and the
 * playground's side-by-side replay (docs/eval.md, "Replays"). Every call of a tool with side effects
 * (`sideEffect` local or external) is
 * - answered from the recorded result of the same call (the same tool, arguments with the same hash),
 *   without running the tool; or
 * - run as it is, when the case declares the tool a sandbox (its effects stay in the case's copy); or
 * - refused (`replay_refused`): the kernel records it as the call's tool/error and the run ends; the
 *   tool never runs.
 * Reads run as they are. Decisions on calls come from the recording too: a recorded approval (or
 * rejection) of the same call, given once, under a name that says so (`replay:NAME`, never NAME).
 *
 * The layer stands in for tools through the host's `CordageOptions.interceptTool`, as faults do
 * (core/eval/faults.ts): nothing in the kernel knows about it.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Ticket } from '../contracts/data.ts'
import type { Tool, ToolIO, ToolResult } from '../contracts/services/tools.ts'
import { digestArgs } from '../kit/hash.ts'
import type { RecordedCall } from './case.ts'

/** The name a decision given again in a replay is recorded under: who gave it, and that it is a replay. */
export const replayedBy = (by: string): string => `replay:${by}`

/** A person's recorded decision on one call, as a replay gives it again. */
export interface RecordedDecision {
  approved: boolean
  /** Who decided in the recording. */
  by: string
  reason?: string
  from: string
}

export interface ReplayLayer {
  /** The tool as an evaluation's runs call it. Pass as `CordageOptions.interceptTool` (under the faults). */
  intercept(agent: string, tool: Tool): Tool
  /** The recorded decision on this call that was not given yet; taken (each is given once). */
  decision(call: { tool: string; argsHash: string }): RecordedDecision | undefined
  /** What the layer answered or refused, in words, in order. */
  readonly log: string[]
}

export interface ReplayPlan {
  /** Tools whose effects the case keeps in its own copy: they run as they are. */
  sandbox: readonly string[]
  recorded: readonly RecordedCall[]
  /** Where the recording comes from, for messages: `the case`, `run r_…`. */
  source: string
}

interface Entry {
  call: RecordedCall
  hash: string
  /** The action (`runId/actionId`) this result answered: another attempt of it gets it again, no other action does. */
  answered?: string
  decided: boolean
}

/** Side effects: anything a tool may change outside the run. */
export const hasSideEffects = (tool: Pick<Tool, 'sideEffect'>): boolean => tool.sideEffect !== 'none'

/**
 * @param log where the layer says what it answered or refused (the engine's list of what it gave the run)
 * @throws CordageError `invalid_input` for recorded arguments that have no canonical JSON form
 */
export function replayLayer(plan: ReplayPlan, log: string[] = []): ReplayLayer {
  const entries: Entry[] = plan.recorded.map((call, i) => {
    try {
      return { call, hash: digestArgs(call.args), decided: false }
    } catch (error) {
      throw new CordageError('invalid_input', `recorded[${i}].args: ${(error as Error).message}`)
    }
  })
  const sandbox = new Set(plan.sandbox)

  const resultFor = (tool: string, hash: string, action?: string) =>
    entries.find((e) => e.call.tool === tool && e.hash === hash && e.call.result && (e.answered === undefined || e.answered === action))

  return {
    log,
    intercept(_agent, tool) {
      if (!hasSideEffects(tool) || sandbox.has(tool.name)) return tool
      const invoke = async (_ticket: Ticket | undefined, args: unknown, io: ToolIO): Promise<ToolResult> => {
        const hash = digestArgs(args)
        const action = `${io.runId}/${io.actionId}`
        const entry = resultFor(tool.name, hash, action)
        if (!entry) {
          log.push(`${tool.name} ${io.actionId}: refused, not run (no recorded result of this call, and no sandbox)`)
          throw new CordageError(
            'replay_refused',
            `${tool.name} (action ${io.actionId}, arguments ${hash}) has side effects (${tool.sideEffect}), and an evaluation never runs them: ${plan.source} holds no result of this call (the same tool with the same arguments) left to answer it with, and ${tool.name} is not a sandbox of the case. The call was refused, not run.`,
          )
        }
        if (entry.answered === undefined) log.push(`${tool.name} ${io.actionId}: answered from the recorded result, not run`)
        entry.answered = action
        const { output, observation, receipt } = entry.call.result!
        return {
          output: output ?? null,
          ...(observation !== undefined ? { observation } : {}),
          // The receipt says the result is the recording's: nothing was done to produce it now.
          receipt: { replayed: entry.call.from ?? plan.source, ...(receipt !== undefined ? { receipt } : {}) },
        }
      }
      return { ...tool, invoke }
    },
    decision({ tool, argsHash }) {
      const entry = entries.find((e) => !e.decided && e.call.tool === tool && e.hash === argsHash && (e.call.approved || e.call.rejected))
      if (!entry) return undefined
      entry.decided = true
      const d = (entry.call.approved ?? entry.call.rejected)!
      return { approved: !!entry.call.approved, by: d.by, reason: d.reason, from: entry.call.from ?? plan.source }
    },
  }
}
