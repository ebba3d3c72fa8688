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
import { invocationOf, reportError } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import { open, overridesOf } from './open.ts'
import type { Handler, Output } from './output.ts'
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

/**
 * A handler whose module is loaded when its command runs: a command's start pays only for its own
 * modules, not for the other twenty commands'.
 */
const lazy =
  <M>(load: () => Promise<M>, handler: (m: M, io: Output) => Handler): Handler =>
  async (args, io) =>
    handler(await load(), io)(args, io)

const steer = () => import('./commands/steer.ts')
const grantsModule = () => import('./commands/grants.ts')
const artifactsModule = () => import('./commands/artifacts.ts')

const commands: Record<string, Handler> = {
  run: lazy(
    () => import('./commands/run.ts'),
    (m) => m.run,
  ),
  submit: lazy(
    () => import('./commands/submit.ts'),
    (m) => m.submit,
  ),
  approve: lazy(steer, (m) => m.approve),
  reject: lazy(steer, (m) => m.reject),
  reconcile: lazy(steer, (m) => m.reconcile),
  resume: lazy(steer, (m) => m.resume),
  cancel: lazy(steer, (m) => m.cancel),
  runs: lazy(
    () => import('./commands/runs.ts'),
    (m) => m.runs,
  ),
  thread: lazy(
    () => import('./commands/thread.ts'),
    (m) => m.thread,
  ),
  events: lazy(
    () => import('./commands/events.ts'),
    (m) => m.events,
  ),
  worker: lazy(
    () => import('./commands/worker.ts'),
    (m) => m.worker,
  ),
  grants: lazy(grantsModule, (m) => m.grants),
  revoke: lazy(grantsModule, (m) => m.revoke),
  check: lazy(
    () => import('./commands/check.ts'),
    (m) => m.check,
  ),
  verify: lazy(
    () => import('./verify.ts'),
    (m, io) => (args) => m.verify(args, io, storeOnly(io)),
  ),
  effects: lazy(
    () => import('./effects.ts'),
    (m, io) => (args) => m.effects(args, io, storeOnly(io)),
  ),
  artifacts: lazy(artifactsModule, (m) => m.artifacts),
  artifact: lazy(artifactsModule, (m) => m.artifact),
  scan: lazy(
    () => import('./scan.ts'),
    (m, io) => (args) => m.scan(args, io, storeOnly(io)),
  ),
  dev: lazy(
    () => import('./dev.ts'),
    (m, io) => (args) => m.dev(args, io, (flags, agents) => open(io, flags, agents ?? 'every agent', 'whole'), overridesOf),
  ),
  // Loads no host: it only writes files.
  init: lazy(
    () => import('./init.ts'),
    (m) => m.init,
  ),
  lock: lazy(
    () => import('./commands/lock.ts'),
    (m) => m.lock,
  ),
  eval: lazy(
    () => import('./eval.ts'),
    (m) => m.evalCommand,
  ),
  playground: lazy(
    () => import('./commands/playground.ts'),
    (m) => m.playground,
  ),
}

// Every command of the table has a handler, and every handler a command (a test checks the help too).
for (const command of Commands)
  if (!commands[command.name]) throw new Error(`cordage: the command "${command.name}" has no handler in cli/main.ts`)
