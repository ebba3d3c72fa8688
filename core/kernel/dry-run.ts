/**
 * @module dry-run
 * What a `dry_run` argument means, by rule alone (no run, no service): whether the model was offered
 * one for a tool, taking it out of the arguments, and why one is refused. A dry run the model was not
 * offered never reaches a tool (core/kernel/preview.ts enforces the rest).
 */
import { describe } from '../contracts/check.ts'
import type { Tool, ToolView } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'

/** The argument a model adds to ask for a call's preview rather than the call. */
export const DryRunArg = 'dry_run'

/** Whether the model was offered a dry run of this tool: its view has a `dry_run` that is not the tool's own. */
export function offersDryRun(view: ToolView, tool: Tool | undefined): boolean {
  return !!tool && hasDryRun(view) && !hasDryRun(tool)
}

function hasDryRun(tool: Pick<Tool, 'inputSchema'>): boolean {
  const props = (tool.inputSchema as { properties?: unknown } | undefined)?.properties
  return !!props && typeof props === 'object' && Object.hasOwn(props, DryRunArg)
}

/**
 * The proposed arguments with a boolean `dry_run` taken out, when the model was offered one for this
 * tool (`offered`). Any other `dry_run` is left in, and admission refuses it ({@link dryRunProblem}).
 */
export function splitDryRun(args: unknown, offered: boolean): { args: unknown; dryRun?: true } {
  if (!offered || !isRecord(args) || !Object.hasOwn(args, DryRunArg) || typeof args[DryRunArg] !== 'boolean') return { args }
  const { [DryRunArg]: flag, ...rest } = args
  return flag ? { args: Object.freeze(rest), dryRun: true } : { args: Object.freeze(rest) }
}

/** Why a proposed call's `dry_run` is refused (`invalid_arguments`): a tool's schema would drop it and the call would run for real. */
export function dryRunProblem(action: ActionState, tool: Tool, offered: boolean): string | undefined {
  if (action.dryRun || hasDryRun(tool) || !isRecord(action.args) || !Object.hasOwn(action.args, DryRunArg)) return undefined
  if (typeof tool.preview !== 'function') return `${tool.name} has no preview, so it cannot be dry-run: call it without dry_run.`
  if (!offered) return `dry_run is not offered for ${tool.name}: call it without dry_run.`
  return `dry_run for ${tool.name} must be true or false, got ${describe(action.args[DryRunArg])}. Call it again with dry_run: true to see what it would do, or without dry_run.`
}

/** The tool as policy sees it in a dry run: a read, that needs no approval of its own. */
export function asRead(tool: Tool): Tool {
  return Object.freeze({ ...tool, sideEffect: 'none', needsApproval: false })
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
