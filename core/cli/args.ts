/**
 * @module cli/args
 * Command-line parsing: one table of commands with their flags and help, checked strictly so a typo in
 * a flag is an error that says which flags exist, never silently ignored.
 */
import { parseArgs } from 'node:util'
import { CordageError } from '../contracts/errors.ts'
import { closest } from '../kit/closest.ts'
import { table, wrap } from './help.ts'

type Flag = { type: 'string' | 'boolean'; help: string; short?: string; multiple?: boolean }

export interface Command {
  name: string
  usage: string
  summary: string
  positionals: string[]
  flags: Record<string, Flag>
}

const preset: Flag = { type: 'string', help: 'Preset file (default: presets/default.yml)' }
const agent: Flag = { type: 'string', help: 'Agent of the preset (default: the only one, or the one that has the run)' }
const json: Flag = { type: 'boolean', help: 'One JSON event per line on stdout instead of readable lines' }
const jsonRows: Flag = { type: 'boolean', help: 'One JSON object per line on stdout instead of readable lines' }
const by: Flag = { type: 'string', help: 'Who gives the command, recorded in the event (default: cli)' }
const reason: Flag = { type: 'string', help: 'Why, recorded in the event' }
const set: Flag = {
  type: 'string',
  multiple: true,
  help: 'Override one preset key after its layers: KEY=VALUE, a dotted path (agents.support.budgets.maxSteps=4) and a YAML or JSON value; repeatable',
}
const noLock: Flag = { type: 'boolean', help: "Ignore the preset's lock file (resolve the preset's ranges as if there were none)" }
const model: Flag = {
  type: 'string',
  help: "Run the agent on this model plugin instead of the preset's: PLUGIN or PLUGIN@RANGE; --set model.config.KEY=VALUE configures it (the preset's model config is kept only for the same plugin); recorded in run/start",
}
const logLevel: Flag = {
  type: 'string',
  help: "Which plugin log lines go to stderr: error, warn (default), info or debug; overrides $CORDAGE_LOG_LEVEL and the preset's logLevel",
}
const stream: Flag = {
  type: 'boolean',
  help: 'Print the model\'s text as it arrives (streamed by model-openai and model-anthropic; whole when the answer is in otherwise); with --json, one {"type":"model/delta"} object per piece',
}
const quiet: Flag = {
  type: 'boolean',
  help: 'No status line: on a terminal, stderr otherwise shows the model call or tool in progress and its elapsed time',
}
const acceptDrift: Flag = {
  type: 'boolean',
  help: 'Continue even if the plugin versions differ from those the run started with (recorded)',
}

const threadFlag: Flag = {
  type: 'string',
  help: 'Add the run as the next turn of this thread (created when new): it sees the earlier turns; refused while the last turn has not ended',
}

export const Commands: Command[] = [
  {
    name: 'run',
    usage:
      'cordage run [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--model PLUGIN[@RANGE]] [--agent NAME] [--thread ID] [--task TEXT] [--stream] [--quiet] [--json]',
    summary: 'Start a run and print its events live',
    positionals: [],
    flags: {
      preset,
      agent,
      task: { type: 'string', help: "The task (default: the agent's task in the preset)" },
      json,
      stream,
      quiet,
      set,
      'no-lock': noLock,
      model,
      thread: threadFlag,
    },
  },
  {
    name: 'submit',
    usage: 'cordage submit [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--thread ID] [--task TEXT] [--json]',
    summary: 'Record a run for a worker to drive, and print its id',
    positionals: [],
    flags: {
      preset,
      agent,
      thread: threadFlag,
      task: { type: 'string', help: "The task (default: the agent's task in the preset)" },
      json: { type: 'boolean', help: 'Print {"runId": ...} instead of the bare id' },
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'approve',
    usage:
      'cordage approve RUN ACTION [--scope once|run|grant] [--args JSON | --any-args] [--expires DURATION] [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--by NAME] [--reason TEXT] [--no-resume] [--accept-drift] [--stream] [--quiet] [--json]',
    summary: 'Approve a pending action (or, with --scope, calls like it) and continue the run',
    positionals: ['RUN', 'ACTION'],
    flags: {
      scope: {
        type: 'string',
        help: 'once (default): this call; run: this tool for the rest of the run; grant: a standing grant across runs',
      },
      args: { type: 'string', help: 'With run or grant: the arguments covered, as a JSON pattern, e.g. \'{"amount":{"lte":100}}\'' },
      'any-args': { type: 'boolean', help: "With run or grant: any arguments (a grant covers exactly this call's by default)" },
      expires: { type: 'string', help: 'With run or grant: lapse after this long (30m, 12h, 7d)' },
      preset,
      agent,
      by,
      reason,
      'no-resume': { type: 'boolean', help: 'Record the approval only; continue later with resume' },
      'accept-drift': acceptDrift,
      json,
      stream,
      quiet,
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'reject',
    usage:
      'cordage reject RUN ACTION [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--by NAME] [--reason TEXT] [--no-resume] [--accept-drift] [--stream] [--quiet] [--json]',
    summary: 'Reject a pending action; the model is told and the run goes on',
    positionals: ['RUN', 'ACTION'],
    flags: {
      preset,
      agent,
      by,
      reason,
      'no-resume': { type: 'boolean', help: 'Record the rejection only; continue later with resume' },
      'accept-drift': acceptDrift,
      json,
      stream,
      quiet,
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'reconcile',
    usage:
      'cordage reconcile RUN ACTION (--committed | --not-committed) [--receipt TEXT] [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--by NAME] [--no-resume] [--accept-drift] [--stream] [--quiet] [--json]',
    summary: 'Settle whether an action with an unknown effect took effect, and continue',
    positionals: ['RUN', 'ACTION'],
    flags: {
      committed: { type: 'boolean', help: 'It took effect: the action closes with that result' },
      'not-committed': { type: 'boolean', help: 'It did not: the action runs again under the same idempotency key' },
      receipt: { type: 'string', help: 'What the target system shows for it (an id), recorded with the decision' },
      preset,
      agent,
      by,
      'no-resume': { type: 'boolean', help: 'Record the decision only; continue later with resume' },
      'accept-drift': acceptDrift,
      json,
      stream,
      quiet,
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'resume',
    usage:
      'cordage resume RUN [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--by NAME] [--input TEXT] [--max-tokens N] [--max-cost USD] [--accept-drift] [--stream] [--quiet] [--json]',
    summary: 'Continue a waiting or suspended run, or take over one whose worker died',
    positionals: ['RUN'],
    flags: {
      preset,
      agent,
      by,
      input: { type: 'string', help: 'Your answer, when the run waits for the user' },
      'max-tokens': { type: 'string', help: "Set the run's token budget from here on (a run suspended with reservation_refused)" },
      'max-cost': { type: 'string', help: "Set the run's cost budget in US dollars from here on" },
      'accept-drift': acceptDrift,
      json,
      stream,
      quiet,
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'cancel',
    usage: 'cordage cancel RUN | --thread ID [--preset FILE] [--agent NAME] [--by NAME] [--reason TEXT] [--quiet] [--json]',
    summary:
      'Cancel a run (one turn of a thread), or with --thread close the thread and cancel its turn going on; a pending approval becomes void; exit 8 when the run had already ended',
    positionals: ['[RUN]'],
    flags: {
      preset,
      agent,
      thread: {
        type: 'string',
        help: 'Close this thread (it takes no more turns) and cancel its turn that has not ended, instead of one run',
      },
      by,
      reason,
      json,
      quiet,
    },
  },
  {
    name: 'runs',
    usage: 'cordage runs [--preset FILE] [--agent NAME] [--status STATUS] [--threads] [--json]',
    summary: 'List runs in the store, newest first (with thread and turn for runs that are turns), or threads',
    positionals: [],
    flags: {
      preset,
      agent,
      status: { type: 'string', help: 'Only runs with this status (COMPLETED, WAITING_APPROVAL, ...)' },
      threads: { type: 'boolean', help: 'List threads instead of runs: turns, last run and status, closed or not' },
      json: jsonRows,
    },
  },
  {
    name: 'thread',
    usage: 'cordage thread ID [--preset FILE] [--agent NAME] [--json]',
    summary: "Print a thread's turns: run, status, failure code, task and answer; and whether it is closed",
    positionals: ['ID'],
    flags: {
      preset,
      agent,
      json: { type: 'boolean', help: 'One JSON object on stdout: the thread and its turns' },
    },
  },
  {
    name: 'events',
    usage: 'cordage events RUN [--preset FILE] [--agent NAME] [--after SEQ] [--follow] [--json]',
    summary: "Print a run's events from the store",
    positionals: ['RUN'],
    flags: {
      preset,
      agent,
      after: { type: 'string', help: 'Only events with a seq above this' },
      follow: { type: 'boolean', help: 'Keep printing new events until the run ends' },
      json,
    },
  },
  {
    name: 'effects',
    usage: 'cordage effects RUN [--preset FILE] [--json]',
    summary: "List a run's side effects: its entries in the ledger, with status, attempts and times",
    positionals: ['RUN'],
    flags: { preset, json: { type: 'boolean', help: 'One JSON object per ledger entry on stdout, as the store holds it' } },
  },
  {
    name: 'artifacts',
    usage: 'cordage artifacts RUN [--preset FILE] [--agent NAME] [--json]',
    summary: 'List the artifacts a run stored: ref, bytes, media type, action and visibility',
    positionals: ['RUN'],
    flags: { preset, agent, json: jsonRows },
  },
  {
    name: 'artifact',
    usage: 'cordage artifact REF [--preset FILE] [--agent NAME] [--run RUN] [--offset N] [--length N] [--out FILE] [--audit]',
    summary: "Print an artifact's bytes (an audit-only one only with --audit)",
    positionals: ['REF'],
    flags: {
      preset,
      agent,
      run: { type: 'string', help: 'Only an artifact listed under this run' },
      offset: { type: 'string', help: 'Byte offset to start at (default 0)' },
      length: { type: 'string', help: 'Bytes to print (default: to the end, at most 16 MiB)' },
      out: { type: 'string', help: 'Write the bytes to this file instead of stdout' },
      audit: { type: 'boolean', help: 'The audit view: also print an audit-only artifact (the raw result of a redacted call)' },
    },
  },
  {
    name: 'verify',
    usage: 'cordage verify RUN | --thread ID [--preset FILE] [--json]',
    summary:
      "Check a run's stored history (numbered, parsed, of this run, unedited: its hash chain), the artifacts it names and its place in a thread; or a thread's turns",
    positionals: ['[RUN]'],
    flags: {
      preset,
      thread: {
        type: 'string',
        help: "Check this thread instead of one run: its turns against each run's chained run/start, and each turn's run",
      },
      json: { type: 'boolean', help: 'One JSON object on stdout: the check, with "intact"' },
    },
  },
  {
    name: 'scan',
    usage: 'cordage scan [--preset FILE] [--json]',
    summary: "Search the stores of a preset for its agents' secrets",
    positionals: [],
    flags: { preset, json: { type: 'boolean', help: 'One JSON object per finding on stdout instead of readable lines' } },
  },
  {
    name: 'worker',
    usage: 'cordage worker [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--agent NAME] [--once] [--poll MS] [--quiet] [--json]',
    summary: 'Drive runs that need a driver (submitted, or whose worker died) until stopped',
    positionals: [],
    flags: {
      preset,
      agent,
      once: { type: 'boolean', help: 'Exit when no run needs a driver' },
      poll: { type: 'string', help: 'Milliseconds between looks for work (default 500)' },
      json,
      quiet,
      set,
      'no-lock': noLock,
    },
  },
  {
    name: 'grants',
    usage: 'cordage grants [--preset FILE] [--agent NAME] [--all] [--json]',
    summary: 'List standing grants (approvals that hold across runs)',
    positionals: [],
    flags: { preset, agent, all: { type: 'boolean', help: 'Also revoked and expired grants' }, json: jsonRows },
  },
  {
    name: 'revoke',
    usage: 'cordage revoke GRANT [--preset FILE] [--agent NAME] [--by NAME] [--reason TEXT] [--json]',
    summary: 'Revoke a standing grant: calls it covered are asked about again',
    positionals: ['GRANT'],
    flags: { preset, agent, by, reason, json: jsonRows },
  },
  {
    name: 'check',
    usage: 'cordage check [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--json]',
    summary: 'Check a preset and show what each agent would load, without running anything',
    positionals: [],
    flags: { preset, json: jsonRows, set, 'no-lock': noLock },
  },
  {
    name: 'lock',
    usage: 'cordage lock [--preset FILE] [--json]',
    summary: "Write the preset's lock file: each agent's exact plugin versions and content hashes",
    positionals: [],
    flags: {
      preset,
      json: { type: 'boolean', help: 'One JSON object per agent: {"agent", "plugins": {name: {version, hash}}}, then {"lock": FILE}' },
    },
  },
  {
    name: 'eval',
    usage:
      'cordage eval SUITE [--preset FILE] [--ablate LIST] [--vary KEY=V1,V2]... [--plugin NAME@RANGE]... [--baseline FILE [--regressions-only]] [--out FILE] [--report FILE] [--jobs N] [--case-timeout MS] [--keep] [--json]',
    summary:
      'Run a suite of eval cases (a case file or a folder of them) against a preset, with ablations, sensitivity axes or plugin versions',
    positionals: ['SUITE'],
    flags: {
      preset: { type: 'string', help: 'Run every case on this preset instead of the one each case names' },
      ablate: {
        type: 'string',
        multiple: true,
        help: 'Also run the suite with each of these switched off: verifier, policy, progress, compaction, tool-search, or a plugin name (comma separated; repeatable)',
      },
      vary: {
        type: 'string',
        multiple: true,
        help: 'Also run it with one setting at each value: maxSteps=1,3,8 (any budget), tools=20,200 (distractor tools), PLUGIN.key=a,b (plugin config); repeatable, one axis each',
      },
      plugin: {
        type: 'string',
        multiple: true,
        help: 'Run it once per version of a plugin: --plugin policy-rules@^1 --plugin policy-rules@^2 (the first is the reference)',
      },
      baseline: { type: 'string', help: 'Compare with the result an earlier --out wrote: regressions, fixes and figures that moved' },
      'regressions-only': {
        type: 'boolean',
        help: 'Exit 0 unless a case that passed in the baseline fails now (instead of: unless any expectation fails)',
      },
      out: { type: 'string', help: 'Write the result as JSON (what --baseline reads)' },
      report: { type: 'string', help: 'Write a self-contained HTML report (also copied to .cordage/eval/latest.html for the playground)' },
      jobs: { type: 'string', help: 'Cases run side by side (default: cores, at most 4); a case marked serial always runs alone' },
      'case-timeout': {
        type: 'string',
        help: 'Time limit of each case in ms, from its run start (default 300000); a case may set its own timeoutMs',
      },
      keep: { type: 'boolean', help: "Keep each case's scratch folder (its preset, database and records) and print where" },
      json: { type: 'boolean', help: 'Print the whole result as one JSON object instead of lines and tables' },
    },
  },
  {
    name: 'playground',
    usage: 'cordage playground [--preset FILE] [--agent NAME] [--port N] [--watch] [--debounce MS] [--token T] [--read-only]',
    summary: 'Serve the local web playground on 127.0.0.1 (agents, live runs, approvals, side-by-side replay, hot reload)',
    positionals: [],
    flags: {
      preset,
      agent: { ...agent, help: 'Serve only this agent (default: every agent of the preset)' },
      port: { type: 'string', help: 'Port on 127.0.0.1 (default 4780; 0 picks a free one)' },
      watch: {
        type: 'boolean',
        help: "Hot-reload the agents' plugins when their files change, as cordage dev does; the page shows each plugin/reloaded",
      },
      debounce: { type: 'string', help: 'With --watch: quiet milliseconds after a file change before rebuilding (default 50)' },
      token: {
        type: 'string',
        help: 'The secret the API requires (16+ characters; default: a new random one, or $CORDAGE_PLAYGROUND_TOKEN). Other users see command lines (ps): prefer the variable',
      },
      'read-only': { type: 'boolean', help: 'Show everything, change nothing: start, approve, reject, compare and swap answer 403' },
    },
  },
  {
    name: 'dev',
    usage:
      'cordage dev [--preset FILE] [--set KEY=VALUE]... [--no-lock] [--model PLUGIN[@RANGE]] [--agent NAME] [--task TEXT] [--debounce MS] [--json]',
    summary: 'Watch a preset and its plugins and hot-reload them into its live agents',
    positionals: [],
    flags: {
      preset,
      agent,
      task: { type: 'string', help: 'Run this task at start and again after each successful reload' },
      debounce: { type: 'string', help: 'Quiet milliseconds after a file change before rebuilding (default 50)' },
      json,
      set,
      'no-lock': noLock,
      model,
    },
  },
  {
    name: 'init',
    usage: 'cordage init [DIR] [--json]',
    summary: 'Start a project in DIR (default: here): a preset, a plugin of your own, its test and a README',
    positionals: ['[DIR]'],
    flags: { json: { type: 'boolean', help: 'One JSON object on stdout: {"dir", "files", "next"}; errors as JSON lines on stderr' } },
  },
]

/**
 * Flags every command that plugs a preset's plugins takes, named once in the tool's help rather than in
 * each usage line (each command's --help lists them). lock only reads plugin folders: nothing of it logs.
 */
export const GlobalFlags = ['log-level'] as const
for (const command of Commands) if (command.flags.preset && command.name !== 'lock') command.flags['log-level'] = logLevel

/** Flags whose empty value (`--agent ""`) is a mistake, never "the default": refused rather than ignored. */
const NonEmpty = [
  'preset',
  'thread',
  'agent',
  'by',
  'status',
  'scope',
  'args',
  'expires',
  'after',
  'poll',
  'port',
  'debounce',
  'set',
  'log-level',
  'model',
]

export interface Parsed {
  command: Command
  positionals: string[]
  flags: Record<string, string | boolean | string[] | undefined>
}

/**
 * @returns the command and its flags; `help` or `version` for those requests; `usage` when no command
 * was given (the caller prints the usage on stderr and exits 2: a script that forgot its command fails)
 */
export function parse(argv: string[]): Parsed | 'help' | 'version' | 'usage' {
  const [name, ...rest] = argv
  if (name === undefined) return 'usage'
  if (name === '--help' || name === '-h') return 'help'
  if (name === 'help') {
    // `cordage help CMD` is `cordage CMD --help`.
    if (rest.length === 0) return 'help'
    const command = Commands.find((c) => c.name === rest[0])
    if (!command || rest.length > 1)
      throw new CordageError(
        'invalid_input',
        `"help" takes one command, got ${rest.map((a) => JSON.stringify(a)).join(' ')}; commands: ${Commands.map((c) => c.name).join(', ')}`,
      )
    return { command, positionals: [], flags: { help: true } }
  }
  if (name === '--version' || name === '-v') return 'version'
  const command = Commands.find((c) => c.name === name)
  if (!command) {
    const names = Commands.map((c) => c.name)
    // A near name that starts like it: "chekc" → check, but "fly" is not "run".
    const near = name.trim() ? closest(name, names) : undefined
    const hint = name.startsWith('-')
      ? ' (a command comes first: cordage <command> [options])'
      : near && near[0] === name[0].toLowerCase()
        ? ` (did you mean "${near}"?)`
        : ''
    throw new CordageError('invalid_input', `unknown command "${name}"${hint}; commands: ${names.join(', ')} (cordage --help)`)
  }
  if (rest.includes('--help') || rest.includes('-h')) return { command, positionals: [], flags: { help: true } }
  let parsed
  try {
    parsed = parseArgs({ args: rest, options: command.flags, allowPositionals: true, strict: true })
  } catch (error) {
    const flags = Object.keys(command.flags).map((f) => `--${f}`)
    const unknown = /Unknown option '(--?[^']+)'/.exec((error as Error).message)?.[1]
    const hint = unknown ? closest(unknown, flags) : undefined
    throw new CordageError(
      'invalid_input',
      `${(error as Error).message.split(/\.\s|\n/)[0]}${hint ? ` (did you mean ${hint}?)` : ''}; ${flags.length ? `"${name}" takes: ${flags.join(', ')}` : `"${name}" takes no options`}`,
    )
  }
  for (const flag of NonEmpty) {
    const value = (parsed.values as Record<string, unknown>)[flag]
    const empty = Array.isArray(value) ? value.some((v) => !String(v).trim()) : typeof value === 'string' && !value.trim()
    if (empty) throw new CordageError('invalid_input', `--${flag} is empty; give it a value (cordage ${name} --help), or leave it out`)
  }
  // `[DIR]` names an optional positional: it may be left out, never exceeded.
  const required = command.positionals.filter((p) => !p.startsWith('[')).length
  if (parsed.positionals.length < required || parsed.positionals.length > command.positionals.length) {
    throw new CordageError(
      'invalid_input',
      `"${name}" takes ${command.positionals.length ? command.positionals.join(' ') : 'no positional arguments'}, got ${parsed.positionals.length ? parsed.positionals.map((p) => JSON.stringify(p)).join(' ') : 'none'}; usage: ${command.usage}`,
    )
  }
  return { command, positionals: parsed.positionals, flags: parsed.values as Parsed['flags'] }
}

/** @param width the terminal's width, when known: descriptions wrap within it (cli/help.ts). */
export function helpText(command?: Command, width?: number): string {
  if (command) {
    return [
      `${command.summary}.`,
      '',
      `usage: ${command.usage}`,
      '',
      ...table(
        Object.entries(command.flags).map(([f, d]) => [`--${f}`, d.help]),
        width,
      ),
    ].join('\n')
  }
  return [
    'cordage — a governed, durable agent harness',
    '',
    'usage: cordage <command> [options]     (cordage <command> --help for its options)',
    '',
    ...table(
      Commands.map((c) => [c.name, c.summary]),
      width,
    ),
    '',
    ...[
      "plugin logs: --log-level error|warn|info|debug on every command that loads a preset (default warn, or $CORDAGE_LOG_LEVEL, or the preset's logLevel; docs/guides/logging.md)",
      'exit codes: 0 completed · 1 failed · 2 usage or config error · 3 failed verification · 4 stopped (budget) · 5 waiting · 6 cancelled · 7 busy (another process drives the run) · 8 ended before a cancel could act',
      'the default preset keeps runs in .cordage/cordage.db (SQLite) in the working directory',
      // Wrapped to a terminal only: into a pipe each stays one line, for grep.
    ].flatMap((line) => (width ? wrap(line, width) : [line])),
  ].join('\n')
}
