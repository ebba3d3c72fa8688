/**
 * @module cli/live
 * Following runs as they happen: their events as lines (or JSON), the status line of the model call or
 * tool in progress (on a terminal), the model's text with `--stream`, and at the end the status and
 * what to do next.
 */
import { RunEventTypes, type ModelDeltaEvent, type RunEvent } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import type { RunState } from '../kernel/state.ts'
import { isWaiting } from '../kernel/status.ts'
import type { Parsed } from './args.ts'
import { ExitCodes, exitCodeFor } from './exit-codes.ts'
import { formatEvent, formatWaiting } from './format.ts'
import { hint, shellQuote } from './hints.ts'
import { formatPreview } from './preview.ts'
import type { Output } from './output.ts'
import { Self } from './self.ts'
import { StatusLine } from './status-line.ts'
import { StreamPrinter } from './stream.ts'

/** An Output whose lines keep clear of the status line and of a streamed line in progress. */
export interface Live {
  io: Output
  event(event: RunEvent): void
  delta(event: ModelDeltaEvent): void
  /** Clear the status line and end a streamed line: before the command returns. */
  close(): void
}

export function live(io: Output, flags: Parsed['flags']): Live {
  const json = !!flags.json
  // Only on a terminal, and never into --json: a pipe or a log file gets lines, not redrawn text.
  const status = io.errIsTTY && io.errWrite && !json && !flags.quiet ? new StatusLine(io.errWrite) : undefined
  const around = (print: () => void) => (status ? status.around(print) : print())
  const stream = flags.stream
    ? new StreamPrinter(
        (line) => around(() => io.out(line)),
        io.write,
        json,
        (open) => status?.hold(open),
      )
    : undefined
  const line = (print: () => void) => {
    stream?.endLine()
    around(print)
  }
  const wrapped: Output = { ...io, out: (l) => line(() => io.out(l)), err: (l) => line(() => io.err(l)) }
  // A second Ctrl-C exits at once: the terminal is not left with a status line on it.
  const onExit = () => status?.close()
  if (status) process.once('exit', onExit)
  return {
    io: wrapped,
    event(event) {
      stream?.event(event)
      // First, so the line printed next is not followed by a status of work it just ended.
      status?.event(event)
      wrapped.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
    },
    delta: (event) => stream?.delta(event),
    close() {
      stream?.endLine()
      status?.close()
      process.off('exit', onExit)
    },
  }
}

/**
 * Print the events of one run (or, with `all`, of every run) as they become durable. Events are
 * dispatched only after the store accepted them, which is always after the command returned the run
 * id, so none is missed. Streamed pieces are listened for only with --stream: a listener makes the
 * adapters stream.
 */
export function follow(app: Cordage, view: Live, runId: () => string | undefined, all = false, stream = false): void {
  for (const type of RunEventTypes) {
    app.root.on(type, (event: RunEvent) => {
      if (all || event.runId === runId()) view.event(event)
    })
  }
  if (stream)
    app.root.on('model/delta', (event) => {
      if (all || event.runId === runId()) view.delta(event)
    })
}

export function print(io: Output, event: RunEvent, json: boolean) {
  io.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
}

/**
 * The status line and the hints, on stderr in both output modes: with --json, stdout holds only the
 * events, and stderr still says how the run ended and what to do next.
 */
export function finish(state: RunState, io: Output, flags: Parsed['flags'], volatile = false, self = Self): number {
  // Each hint names the preset given (as an absolute path) and its --set and --no-lock: copied into
  // another shell, in another folder, it acts on this run of this preset (cli/hints.ts).
  const line = (command: string, args: string[], tail = '') => hint(command, args, flags, tail, self)
  const code = state.failureCode ? ` (${state.failureCode})` : ''
  io.err(`run ${state.runId} ${state.status}${code}`)
  if (state.status === 'WAITING_RECONCILIATION' && state.waiting?.actionId) {
    io.err(`  settle:  ${line('reconcile', [state.runId, state.waiting.actionId], '--committed|--not-committed')}`)
  }
  const decided = state.waiting?.actionId ? state.actions[state.waiting.actionId]?.status : undefined
  const child = state.waiting?.child
  if (child) {
    // Waiting on its child: what is to be done is done there.
    if (state.status === 'WAITING_APPROVAL' && child.actionId) {
      io.err(`  approve: ${line('approve', [child.runId, child.actionId])}`)
      io.err(`  reject:  ${line('reject', [child.runId, child.actionId])}`)
    } else if (state.status === 'WAITING_USER') io.err(`  answer:  ${line('resume', [child.runId], '--input "..."')}`)
  } else if (state.status === 'WAITING_APPROVAL' && (decided === 'approved' || decided === 'rejected')) {
    io.err(`  ${decided}; continue: ${line('resume', [state.runId])}`)
  } else if (state.status === 'WAITING_APPROVAL' && state.waiting?.actionId) {
    // When the policy names who may decide, say so: the default --by (cli) would be refused.
    const approvers = state.actions[state.waiting.actionId]?.decision?.approvers
    const by =
      approvers && !approvers.includes('*') ? `--by ${approvers.length === 1 ? shellQuote(approvers[0]) : `<${approvers.join('|')}>`}` : ''
    io.err(`  approve: ${line('approve', [state.runId, state.waiting.actionId], by)}`)
    io.err(`  reject:  ${line('reject', [state.runId, state.waiting.actionId], by)}`)
    // What the call would do, as recorded with the request: the person deciding reads it here.
    const action = state.actions[state.waiting.actionId]
    if (action) for (const l of formatPreview(action, io.color, line('events', [state.runId], '--json'))) io.err(l)
  } else if (state.status === 'WAITING_USER') {
    io.err(`  answer:  ${line('resume', [state.runId], '--input "..."')}`)
  }
  if (state.parent || state.waiting?.on) io.err(formatWaiting(state, flags, self).replace(/^\n/, ''))
  if (volatile && isWaiting(state.status)) {
    io.err(
      '  note: this agent uses store-memory, which keeps the run only while this process lives; the commands above need a durable store',
    )
  }
  return exitCodeFor(state.status)
}

/** The agent keeps runs only in this process's memory. */
export function volatileStore(app: Cordage, agent: string): boolean {
  return 'store-memory' in app.pluginsOf(agent)
}

/** Ctrl-C cancels the run (it ends CANCELLED, exit 6); a second Ctrl-C exits at once. */
export function cancelOnSignal(agent: AgentRuntime, runId: string, io: Output): () => void {
  let count = 0
  const onSignal = () => {
    if (++count > 1) process.exit(ExitCodes.cancelled)
    io.err('cancelling… (Ctrl-C again to exit now)')
    void agent.cancel(runId, { by: 'cli', reason: 'interrupted' }).catch(() => {})
  }
  process.on('SIGINT', onSignal)
  return () => process.off('SIGINT', onSignal)
}
