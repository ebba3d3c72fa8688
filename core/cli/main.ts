/**
 * @module cli/main
 * The `cordage` command. {@link main} takes argv and an output sink and returns the exit code, so tests
 * run it in-process as well as through the real binary. Each command is a handler in commands/ (or a
 * module of its own here, loaded on demand); this file only parses, dispatches and reports errors.
 */
import { CordageError } from '../contracts/errors.ts'
import { KernelVersion } from '../kernel/version.ts'
import { Commands, helpText, parse } from './args.ts'
import { colorChoice } from './color.ts'
import { artifact, artifacts } from './commands/artifacts.ts'
import { check } from './commands/check.ts'
import { events } from './commands/events.ts'
import { grants, revoke } from './commands/grants.ts'
import { lock } from './commands/lock.ts'
import { playground } from './commands/playground.ts'
import { run } from './commands/run.ts'
import { runs } from './commands/runs.ts'
import { approve, cancel, reconcile, reject, resume } from './commands/steer.ts'
import { submit } from './commands/submit.ts'
import { thread } from './commands/thread.ts'
import { worker } from './commands/worker.ts'
import { effects } from './effects.ts'
import { invocationOf, reportError } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import { open, overridesOf } from './open.ts'
import type { Handler, Output } from './output.ts'
import { scan } from './scan.ts'
import { verify } from './verify.ts'
export type { Output } from './output.ts'

export async function main(argv: string[], sink: Output): Promise<number> {
  const io = withColor(sink)
  const at = invocationOf(argv, Object.keys(commands))
  try {
    const parsed = parse(argv)
    if (parsed === 'help') {
      io.out(helpText(undefined, io.outIsTTY ? process.stdout.columns : undefined))
      return ExitCodes.ok
    }
    if (parsed === 'usage') {
      io.err(helpText())
      io.err('error [invalid_input]: no command given; run cordage <command> (the list above), or cordage --help')
      return ExitCodes.usage
    }
    if (parsed === 'version') {
      io.out(`cordage ${KernelVersion}`)
      return ExitCodes.ok
    }
    if (parsed.flags.help) {
      io.out(helpText(parsed.command))
      return ExitCodes.ok
    }
    at.json = !!parsed.flags.json
    at.flags = parsed.flags
    return await commands[parsed.command.name](parsed, io)
  } catch (error) {
    reportError(io, error, at)
    if (CordageError.is(error)) {
      if (['run_busy', 'lease_lost', 'seq_conflict', 'thread_busy'].includes(error.code)) return ExitCodes.busy
      if (error.code === 'run_ended') return ExitCodes.ended
      return ['config', 'usage', 'environment_drift'].includes(error.kind) ? ExitCodes.usage : ExitCodes.failed
    }
    return ExitCodes.failed
  }
}

/** The output with its colour decided: as the caller said, or from the terminal and FORCE_COLOR / NO_COLOR. */
function withColor(io: Output): Output {
  if (io.color !== undefined) return io
  // Not the binary (a test, an embedding): plain lines, whatever the environment says (node --test sets FORCE_COLOR).
  if (io.outIsTTY === undefined) return { ...io, color: false }
  const choice = colorChoice(!!io.outIsTTY, process.env)
  if (choice.warning) io.err(`warning: ${choice.warning}`)
  return { ...io, color: choice.color }
}

// Reading runs starts only the stores: no tool servers, no model keys needed.
const storeOnly = (io: Output) => (flags: Parameters<typeof open>[1]) => open(io, flags, 'stores')

const commands: Record<string, Handler> = {
  run,
  submit,
  approve,
  reject,
  reconcile,
  resume,
  cancel,
  runs,
  thread,
  events,
  worker,
  grants,
  revoke,
  check,
  verify: (args, io) => verify(args, io, storeOnly(io)),
  effects: (args, io) => effects(args, io, storeOnly(io)),
  artifacts,
  artifact,
  scan: (args, io) => scan(args, io, storeOnly(io)),
  dev: async (args, io) =>
    (await import('./dev.ts')).dev(args, io, (flags, agents) => open(io, flags, agents ?? 'every agent'), overridesOf),
  // Loaded on demand, and loads no host: it only writes files.
  init: async (args, io) => (await import('./init.ts')).init(args, io),
  lock,
  // Loaded on demand: the other commands do not pay for the eval engine.
  eval: async (args, io) => (await import('./eval.ts')).evalCommand(args, io),
  playground,
}

// Every command of the table has a handler, and every handler a command (a test checks the help too).
for (const command of Commands)
  if (!commands[command.name]) throw new Error(`cordage: the command "${command.name}" has no handler in cli/main.ts`)
