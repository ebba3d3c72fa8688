/**
 * @module cli/dev
 * `cordage dev`: load a preset, watch the folders of the plugins its agents use, and hot-reload a
 * plugin into every agent that uses it when its files change (core/host/dev.ts). The preset is watched
 * too (core/host/preset-reload.ts): a changed plugin config or version is a reload of that plugin; a
 * changed plugin list (or model, or agent settings) builds the agents again from the edited preset when
 * no run is in flight, and is refused with a message when one is; an edit that does not load changes
 * nothing (cli/dev-session.ts). Each reload is printed (ok, or why the old version still serves).
 * With `--task`, the agent runs the task at start and again after each successful reload, so an edit
 * shows up in the next run's events. Runs until Ctrl-C. `cordage playground --watch` runs the same
 * reloader in the playground process and prints the same lines (cli/dev-output.ts).
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunOverrides } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import type { Parsed } from './args.ts'
import { debounceOf } from './dev-output.ts'
import { DevSession } from './dev-session.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

export { debounceOf, printPreset, printReload, printWatching } from './dev-output.ts'

/**
 * The `dev` command. `open` loads the preset the way every other command does (main.ts owns preset
 * flags and defaults: --set, --no-lock, --model), with only the agents named; `overridesOf` is what
 * run/start records of --model.
 */
export async function dev(
  { flags }: Parsed,
  io: Output,
  open: (flags: Parsed['flags'], agents?: string[]) => Promise<Cordage>,
  overridesOf: (agent: AgentRuntime, flags: Parsed['flags']) => RunOverrides | undefined = () => undefined,
): Promise<number> {
  const task = flags.task as string | undefined
  if (task !== undefined && !task.trim()) throw new CordageError('invalid_input', '--task is empty')
  const session = await DevSession.start({ flags, io, open, overridesOf, task, debounceMs: debounceOf(flags) })
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await session.stop()
  io.err('stopped')
  return ExitCodes.ok
}
