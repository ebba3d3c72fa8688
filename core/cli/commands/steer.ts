/**
 * @module cli/commands/steer
 * The commands that act on a run that exists and then follow it: approve, reject, reconcile, resume and
 * cancel. Each finds the agent the run belongs to, gives its one command, and follows the run as
 * `cordage run` does until it ends or pauses again.
 */
import { CordageError } from '../../contracts/errors.ts'
import type { AgentRuntime } from '../../kernel/agent.ts'
import type { ApprovalOptions, RunHandle } from '../../contracts/commands.ts'
import type { RunState } from '../../kernel/state.ts'
import type { Parsed } from '../args.ts'
import { finish, follow, live } from '../live.ts'
import { locate, open, startAgent } from '../open.ts'
import type { Handler, Output } from '../output.ts'
import { hint } from '../hints.ts'
import { formatPreview } from '../preview.ts'
import { cancelThread } from './thread.ts'

export const approve: Handler = async (args, io) => {
  const wide = approvalScope(args)
  return steer(args, io, async (agent, [run, action]) => {
    // The person approving sees what the call would do: the preview recorded with the request, never run again.
    const pending = (await agent.load(run)).actions[action]
    if (pending?.status === 'awaiting_approval') {
      const lines = formatPreview(pending, io.color, hint('events', [run], args.flags, '--json'))
      if (lines.length) io.err(`approving ${action} (${pending.tool}):`)
      for (const line of lines) io.err(line)
    }
    return agent.approve(run, action, { ...continuing(args), ...wide })
  })
}

export const reject: Handler = (args, io) => steer(args, io, (agent, [run, action]) => agent.reject(run, action, continuing(args)))

export const reconcile: Handler = async (args, io) => {
  const { committed, 'not-committed': notCommitted } = args.flags
  if (!!committed === !!notCommitted)
    throw new CordageError('invalid_input', 'say what happened: exactly one of --committed or --not-committed')
  return steer(args, io, (agent, [run, action]) =>
    agent.reconcile(run, action, !!committed, { ...continuing(args), receipt: args.flags.receipt }),
  )
}

export const resume: Handler = (args, io) => {
  const budgets = resumeBudgets(args)
  return steer(args, io, (agent, [run]) =>
    agent.resume(run, {
      by: by(args),
      input: args.flags.input as string | undefined,
      acceptDrift: !!args.flags['accept-drift'],
      ...(budgets ? { budgets } : {}),
    }),
  )
}

/** --max-tokens and --max-cost, read as numbers; the kernel checks them (positive) before the run is taken. */
function resumeBudgets(args: Parsed): { maxTokens?: number; maxCostUsd?: number } | undefined {
  const number = (flag: string): number | undefined => {
    const text = args.flags[flag] as string | undefined
    if (text === undefined) return undefined
    const value = Number(text)
    if (text.trim() === '' || !Number.isFinite(value)) throw new CordageError('invalid_input', `--${flag} takes a number, got "${text}"`)
    return value
  }
  const maxTokens = number('max-tokens')
  const maxCostUsd = number('max-cost')
  if (maxTokens === undefined && maxCostUsd === undefined) return undefined
  return { ...(maxTokens === undefined ? {} : { maxTokens }), ...(maxCostUsd === undefined ? {} : { maxCostUsd }) }
}

export const cancel: Handler = (args, io) => {
  if (args.flags.thread !== undefined) return cancelThread(args, io)
  if (!args.positionals.length)
    throw new CordageError(
      'invalid_input',
      '"cancel" takes RUN or --thread ID: cordage cancel RUN (one run, or one turn of a thread) or cordage cancel --thread ID (close the thread)',
    )
  return steer(
    args,
    io,
    async (agent, [run]) => {
      // Driven by another process, the run is asked to stop through the store; this waits for it. A run
      // that had ended before the cancel could act rejects with run_ended (exit 8).
      const done = agent.cancel(run, { by: by(args), reason: args.flags.reason as string | undefined })
      return { runId: run, done }
    },
    cancelNote,
  )
}

/** What became of an accepted cancel, said before the status line. */
function cancelNote(state: RunState): string | undefined {
  if (state.status === 'CANCELLED')
    return `cancel accepted: run ${state.runId} stopped at its next safe point and ended CANCELLED${state.cancel ? ` (cancel asked by ${state.cancel.by})` : ''}; run/end names the side effects that committed meanwhile`
  if (state.status === 'RUNNING' || state.status === 'CANCELLING')
    return `cancel accepted: run ${state.runId} is still ${state.status} in another process, which stops it at its next safe point; follow it with cordage events ${state.runId} --follow`
  return undefined
}

async function steer(
  args: Parsed,
  io: Output,
  command: (agent: AgentRuntime, positionals: string[]) => Promise<RunHandle>,
  note?: (state: RunState) => string | undefined,
): Promise<number> {
  const [runId] = args.positionals
  // Only the run's own agent starts (docs/reference/presets.md#which-agents-a-command-starts): another
  // agent of the preset that cannot start does not close the way to this run.
  const app = await open(io, args.flags, 'on demand')
  const view = live(io, args.flags)
  try {
    let agent = await startAgent(app, await locate(app, runId, args.flags.agent as string | undefined))
    // A run that goes on may need plugins pinned to its recorded versions (onDrift: pin).
    if (args.command.name !== 'cancel' && !args.flags['no-resume']) agent = await app.forRun(agent.name, runId)
    follow(app, view, () => runId, false, !!args.flags.stream)
    const handle = await command(agent, args.positionals)
    const state = await handle.done
    view.close()
    const said = note?.(state)
    if (said) view.io.err(said)
    return finish(state, view.io, args.flags)
  } finally {
    view.close()
    await app.stop()
  }
}

function continuing(args: Parsed) {
  return {
    by: by(args),
    reason: args.flags.reason as string | undefined,
    resume: !args.flags['no-resume'],
    acceptDrift: !!args.flags['accept-drift'],
  }
}

function by(args: Parsed): string {
  return (args.flags.by as string | undefined) ?? 'cli'
}

/** The scope flags of approve, checked: --args and --any-args and --expires only widen a run or grant approval. */
function approvalScope(args: Parsed): Pick<ApprovalOptions, 'scope' | 'args' | 'expiresInMs'> {
  const { scope, args: pattern, 'any-args': anyArgs, expires } = args.flags as Record<string, string | boolean | undefined>
  if (scope !== undefined && !['once', 'run', 'grant'].includes(scope as string))
    throw new CordageError('invalid_input', `--scope must be once, run or grant, got ${JSON.stringify(scope)}`)
  const wide = scope === 'run' || scope === 'grant'
  if (!wide && (pattern !== undefined || anyArgs || expires !== undefined))
    throw new CordageError('invalid_input', '--args, --any-args and --expires go with --scope run or --scope grant')
  if (pattern !== undefined && anyArgs) throw new CordageError('invalid_input', 'give --args or --any-args, not both')
  let parsed: ApprovalOptions['args']
  if (pattern !== undefined) {
    try {
      parsed = JSON.parse(pattern as string)
    } catch (error) {
      throw new CordageError('invalid_input', `--args is not JSON (${(error as Error).message}); write it like '{"amount":{"lte":100}}'`)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new CordageError('invalid_input', '--args must be a JSON object: argument path → test')
  }
  return {
    scope: scope as ApprovalOptions['scope'],
    args: anyArgs ? 'any' : parsed,
    expiresInMs: expires === undefined ? undefined : duration(expires as string),
  }
}

function duration(text: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(text)
  if (!m || Number(m[1]) === 0)
    throw new CordageError('invalid_input', `--expires must be a duration like 30m, 12h or 7d, got ${JSON.stringify(text)}`)
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd']
}
