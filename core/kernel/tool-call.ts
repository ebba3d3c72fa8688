/**
 * @module tool-call
 * One tool call in flight: its time limit, the abort signal the tool sees, and cancellation from
 * outside. The signal is created only if the tool asks for it: an AbortController costs more than a
 * whole no-op tool call (measured ~1.5 us on Node 20), and most quick tools never look at it.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Ticket } from './ticket.ts'
import type { Tool, ToolIO, ToolResult } from '../contracts/services/tools.ts'
import type { Constraints } from '../contracts/data.ts'
import { isThenable } from '../kit/later.ts'

/** How a call settled: as Promise.allSettled reports it, so one call and a wave read alike. */
export type Settled = PromiseSettledResult<ToolResult>

/** A tool's body behind its ticket check, answering at once when the body does (core/kernel/tool.ts `directInvoke`). */
export type Invoke = (ticket: Ticket | undefined, args: unknown, io: ToolIO) => ToolResult | Promise<ToolResult>

export class ToolCall {
  /**
   * How the call settled: at once for a body that answered at once (no promise, no timer: it could not
   * be interrupted anyway), else a promise that never rejects.
   */
  result: Settled | Promise<Settled>
  private controller: AbortController | undefined
  private reason: unknown
  private done = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private fail!: (reason: unknown) => void

  /**
   * @param timeoutMs the call's time limit when a constraint shortens the tool's own (core/kernel/constraints.ts)
   * @param invoke the tool's body as the kernel may call it directly (a tool built by defineTool), else its `invoke`
   */
  constructor(tool: Tool, ticket: Ticket, args: unknown, io: Omit<ToolIO, 'signal'>, timeoutMs = tool.timeoutMs, invoke?: Invoke) {
    const toolIO = new CallIO(io, this)
    let answer: ToolResult | Promise<ToolResult>
    try {
      answer = invoke ? invoke(ticket, args, toolIO) : tool.invoke(ticket, args, toolIO)
    } catch (reason) {
      this.result = { status: 'rejected', reason }
      return
    }
    if (!isThenable(answer)) {
      // Only a defined tool's body may answer at once: a tool's own invoke promises its answer (the contract), or it failed.
      this.result = invoke ? { status: 'fulfilled', value: answer } : { status: 'rejected', reason: new TypeError('invoke: no promise') }
      return
    }
    this.result = new Promise<Settled>((resolve) => {
      this.fail = (reason) => resolve({ status: 'rejected', reason })
      this.timer = setTimeout(
        () => this.abort(new CordageError('tool_timeout', `${tool.name} did not finish within ${timeoutMs} ms`)),
        timeoutMs,
      )
      // Promise.resolve: a thenable that is not a promise is adopted as `await` would (its then called
      // later, a throw there a rejection, a promise it gives unwrapped); a native promise is itself.
      Promise.resolve(answer).then(
        (value) => this.settle() && resolve({ status: 'fulfilled', value }),
        (reason) => this.settle() && resolve({ status: 'rejected', reason }),
      )
    })
  }

  /**
   * Tell the tool to stop (its signal aborts with `reason`). Without `graceMs` the call fails with
   * `reason` at once; so does one whose body answered at once, while its answer is not taken yet (the
   * loop aborts a call it starts after a cancel). Once taken, what such a body did stands. With
   * `graceMs`, the call gets that long to finish on its own first: a call with side effects may commit
   * despite the abort, and then it must be reported as committed, not as cancelled.
   */
  abort(reason: unknown, graceMs = 0): void {
    this.reason = reason
    this.controller?.abort(reason)
    if (!(this.result instanceof Promise)) {
      if (graceMs <= 0) this.result = { status: 'rejected', reason }
      return
    }
    const fail = () => this.settle() && this.fail(reason)
    if (graceMs <= 0) return void fail()
    clearTimeout(this.timer)
    this.timer = setTimeout(fail, graceMs)
  }

  /** The signal the tool sees, made the first time it asks (CallIO's getter). */
  signalOnDemand(): AbortSignal {
    this.controller ??= new AbortController()
    // Aborted from the start when the call was aborted before the tool asked (a no-op on one already aborted).
    if (this.reason !== undefined) this.controller.abort(this.reason)
    return this.controller.signal
  }

  /** True the first time: the call is over (result, error, timeout or abort), whichever came first. */
  private settle(): boolean {
    if (this.done) return false
    this.done = true
    clearTimeout(this.timer)
    return true
  }
}

/**
 * What a tool is told about its call. A class rather than an object literal with a `signal` getter:
 * V8 builds such a literal on a slow path every time, a sizeable part of a no-op call. The call it
 * belongs to is a #private field, out of the tool's reach.
 */
class CallIO implements ToolIO {
  readonly runId: string
  readonly actionId: string
  readonly idempotencyKey: string
  readonly attempt: number
  readonly fencingToken: number | undefined
  readonly constraints: Readonly<Constraints> | undefined
  readonly #call: ToolCall

  constructor(io: Omit<ToolIO, 'signal'>, call: ToolCall) {
    this.runId = io.runId
    this.actionId = io.actionId
    this.idempotencyKey = io.idempotencyKey
    this.attempt = io.attempt
    this.fencingToken = io.fencingToken
    // A frozen copy: the tool holds the limits as recorded, and cannot loosen them for a neighbour.
    this.constraints = io.constraints ? Object.freeze({ ...io.constraints }) : undefined
    this.#call = call
  }

  get signal(): AbortSignal {
    return this.#call.signalOnDemand()
  }
}

Object.freeze(ToolCall.prototype)
Object.freeze(CallIO.prototype)
