/**
 * @module tool
 * {@link defineTool} builds a tool whose body can only be reached through a valid ticket. The body is
 * closed over, never exposed: a registry, a plugin or a test holding the tool can list it and show it
 * to a model, but running it takes a ticket that only the loop issues after a recorded policy decision.
 */
import { CordageError } from '../contracts/errors.ts'
import { redeemTicket } from './ticket.ts'
import type { Tool, ToolDefinition } from '../contracts/services/tools.ts'
import type { Invoke } from './tool-call.ts'
import { checkDefinition, onParsed, previewOnParsed } from '../contracts/checks/tool.ts'

// A copy must not claim to hold constraints, or to cost less, than the tool was defined with.
const ContractKeys = ['name', 'sideEffect', 'idempotent', 'timeoutMs', 'needsApproval', 'retries', 'enforces', 'cost'] as const
/** The fields policy, the ledger and the loop rely on, as each tool was defined: by its `invoke`. */
type Defined = Readonly<Pick<Tool, (typeof ContractKeys)[number]>> & { readonly identity: object }
const definitions = new WeakMap<Tool['invoke'], Defined>()
const directs = new WeakMap<Tool['invoke'], Invoke>()

/**
 * @example
 * const lookup = defineTool({
 *   name: 'lookup_policy', description: 'Find the support policy for a topic',
 *   input: z.object({ topic: z.string() }), sideEffect: 'none', idempotent: true,
 *   run: ({ topic }) => ({ output: kb[topic] }),
 * })
 */
export function defineTool<A>(def: ToolDefinition<A>): Tool {
  checkDefinition(def)
  const inputSchema = def.inputSchema ?? def.input.toJSONSchema?.() ?? { type: 'object' }
  delete (inputSchema as { $schema?: unknown }).$schema
  const body = def.run
  // Tickets for this tool are bound to this object: a copy of the tool keeps it (same invoke), a
  // wrapper that forwards to invoke does not, so its ticket is refused here.
  const identity = Object.freeze({ tool: def.name })
  // The body behind the ticket check, as `invoke` runs it; the loop calls it directly (directInvoke),
  // so that a body that answers at once costs no promise and no timer.
  const direct: Invoke = (ticket, args, io) => {
    redeemTicket(ticket, { runId: io.runId, actionId: io.actionId, tool: def.name, args, target: identity })
    const parsed = def.input.safeParse(args)
    if (!parsed.success) throw new CordageError('invalid_arguments', `arguments for ${def.name} do not match its schema`)
    return body(parsed.data, io)
  }
  const tool = Object.freeze({
    name: def.name,
    description: def.description,
    input: def.input,
    inputSchema,
    sideEffect: def.sideEffect,
    idempotent: def.idempotent ?? def.sideEffect === 'none',
    timeoutMs: def.timeoutMs ?? 30_000,
    needsApproval: def.needsApproval ?? false,
    retries: def.retries ?? 0,
    tags: def.tags ?? [],
    artifactAboveBytes: def.artifactAboveBytes,
    idempotencyKey: def.idempotencyKey && onParsed(def.input, def.idempotencyKey, ''),
    reconcile: def.reconcile,
    footprint: def.footprint && onParsed(def.input, def.footprint, {}),
    preview: def.preview && previewOnParsed(def.name, def.input, def.preview),
    ...(def.enforces ? { enforces: Object.freeze([...def.enforces]) } : {}),
    ...(def.cost ? { cost: Object.freeze({ ...def.cost }) } : {}),
    invoke(ticket, args, io) {
      try {
        return Promise.resolve(direct(ticket, args, io))
      } catch (error) {
        return Promise.reject(error)
      }
    },
  } satisfies Tool)
  const contract = Object.fromEntries(ContractKeys.map((key) => [key, tool[key]])) as Omit<Defined, 'identity'>
  definitions.set(tool.invoke, Object.freeze({ ...contract, identity }))
  directs.set(tool.invoke, direct)
  return tool
}

/**
 * The tool as it was defined. A registry hands tools around as copies (it adds `owner`), and a copy
 * could also change what the tool claims to be (`sideEffect: 'none'` on a write, so policy allows it).
 * For a tool built with {@link defineTool}, the loop decides, times and records calls on the contract
 * the tool was defined with: this returns the tool itself when the copy says the same, else a copy with
 * the defined contract. A tool built some other way is taken as it is (its own code is its contract).
 */
export function asDefined(tool: Tool): Tool {
  const defined = definitions.get(tool.invoke)
  if (!defined || ContractKeys.every((key) => tool[key] === defined[key])) return tool
  const { identity: _, ...contract } = defined
  return Object.freeze({ ...tool, ...contract })
}

/**
 * The identity tickets for this tool are bound to: its definition's, when it was built with defineTool
 * (a registry's copy has the same), else undefined (a tool written by hand redeems without one).
 */
export function targetOf(tool: Tool): object | undefined {
  return definitions.get(tool.invoke)?.identity
}

/** The body of a tool built by defineTool behind the same ticket check as its `invoke`, which may answer at once; undefined for any other tool. */
export function directInvoke(tool: Tool): Invoke | undefined {
  return directs.get(tool.invoke)
}
