/**
 * @module eval/faults
 * Tool faults for `cordage eval`: a case names a tool and how its calls break (case.ts `faults`), and the
 * engine passes {@link ToolFaults.intercept} as `CordageOptions.interceptTool`, so the kernel runs each
 * call of that tool through a stand-in. The stand-in breaks the call the way a real system would (it
 * never answers, it is unreachable, the answer is lost after the effect landed, it refuses), and the
 * kernel's own handling of that failure is what the case then checks: the fault is injected at the
 * tool's edge and nothing in the kernel knows about it.
 *
 * Calls are counted per tool name from the first call of the app (every agent and run in it; a case
 * is one app). Faults on one tool apply in the order listed, each to its `times` calls: `transient`
 * once then `fail` once breaks calls 1 and 2. A fault listed after an `always` on the same tool could
 * never apply, so it is refused rather than ignored.
 *
 * A fault naming a tool the agent never registers would make a case pass without testing anything:
 * the engine asks {@link ToolFaults.unused} with the agent's registered tools and refuses such a case.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Tool, ToolIO, ToolResult } from '../contracts/services/tools.ts'
import type { Ticket } from '../contracts/data.ts'
import { ToolFaultKinds, type Fault } from './case.ts'

/** A fault on a tool's calls: case.ts's `Fault` with a `tool` (times defaults to 1 when the case is parsed). */
export type ToolFault = Extract<Fault, { tool: string }>
export type ToolFaultKind = ToolFault['kind']

export interface ToolFaults {
  /**
   * The tool as the agent's runs call it: the tool itself when no fault names it, else a fresh copy
   * (registered tools are frozen) whose `invoke` breaks the calls the faults cover and forwards the
   * others. Pass as `CordageOptions.interceptTool`.
   */
  intercept(agent: string, tool: Tool): Tool
  /** Faults injected so far, by tool name; every tool a fault names is listed, 0 when none fired. */
  injected(): Record<string, number>
  /**
   * The tools faults name that are not in `registered` (the agent's registered tool names), each
   * once, in the order the faults name them. Not empty: the case would test nothing, refuse it.
   */
  unused(registered: readonly string[]): string[]
}

/** Why each kind breaks a call, in the message the tool/error event records. */
const Messages = {
  transient: 'eval fault: the tool could not be reached (nothing was sent)',
  'lost-response': 'eval fault: the response was lost after the call',
  fail: 'eval fault: the tool refused the call',
} as const

/**
 * Stand-ins for the tools `faults` name.
 * @throws CordageError `invalid_input` for a fault that is not well formed, or that can never apply
 */
export function toolFaults(faults: readonly ToolFault[]): ToolFaults {
  const byTool = new Map<string, ToolFault[]>()
  for (const [i, fault] of faults.entries()) {
    checkFault(fault, i)
    const list = byTool.get(fault.tool) ?? []
    const always = list.find((f) => f.times === 'always')
    if (always)
      throw new CordageError(
        'invalid_input',
        `the fault ${fault.kind} on ${fault.tool} can never apply: an earlier fault (${always.kind}, times: always) breaks every call of ${fault.tool}; remove one of them`,
      )
    list.push(fault)
    byTool.set(fault.tool, list)
  }
  const calls = new Map<string, number>()
  const injected = new Map<string, number>([...byTool.keys()].map((name) => [name, 0]))

  /** The fault that covers call `n` (1-based) of a tool, if any. */
  const faultFor = (list: ToolFault[], n: number): ToolFault | undefined => {
    let first = 1
    for (const fault of list) {
      if (fault.times === 'always' || n < first + fault.times) return fault
      first += fault.times
    }
    return undefined
  }

  return {
    intercept(_agent, tool) {
      const list = byTool.get(tool.name)
      if (!list) return tool
      const invoke = async (ticket: Ticket | undefined, args: unknown, io: ToolIO): Promise<ToolResult> => {
        const n = (calls.get(tool.name) ?? 0) + 1
        calls.set(tool.name, n)
        const fault = faultFor(list, n)
        if (!fault) return tool.invoke(ticket, args, io)
        if (fault.kind === 'lost-response') {
          // The real call runs and its effect lands; only its answer goes missing. A call that fails on
          // its own fails as it would have: no fault was injected into it.
          await tool.invoke(ticket, args, io)
          injected.set(tool.name, injected.get(tool.name)! + 1)
          throw new CordageError('tool_connection_lost', Messages['lost-response'])
        }
        injected.set(tool.name, injected.get(tool.name)! + 1)
        if (fault.kind === 'timeout') return neverAnswer(io.signal)
        throw new CordageError(fault.kind === 'transient' ? 'tool_unavailable' : 'tool_failed', `${Messages[fault.kind]} (call ${n})`)
      }
      return { ...tool, invoke }
    },
    injected: () => Object.fromEntries(injected),
    unused: (registered) => {
      const known = new Set(registered)
      return [...byTool.keys()].filter((name) => !known.has(name))
    },
  }
}

/**
 * A call that never answers: it settles only when its signal aborts (the kernel's time limit,
 * `timeoutMs`, or cancellation), with the signal's reason, so no promise or listener outlives the call.
 */
function neverAnswer(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

/** A fault handed in without case.ts's parsing (an API caller) is checked as strictly. */
function checkFault(fault: ToolFault, i: number): void {
  const at = `faults[${i}]`
  if (!fault || typeof fault !== 'object' || typeof fault.tool !== 'string' || !fault.tool)
    throw new CordageError('invalid_input', `${at}: a tool fault needs \`tool\`, the name of the tool whose calls fail`)
  if (!ToolFaultKinds.includes(fault.kind))
    throw new CordageError('invalid_input', `${at}: kind must be one of ${ToolFaultKinds.join(', ')}, got ${JSON.stringify(fault.kind)}`)
  if (fault.times !== 'always' && !(Number.isInteger(fault.times) && fault.times >= 1))
    throw new CordageError(
      'invalid_input',
      `${at}: times must be a whole number of calls (1 or more) or "always", got ${JSON.stringify(fault.times)}`,
    )
}
