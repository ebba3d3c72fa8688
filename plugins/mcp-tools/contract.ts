/**
 * The execution contract of an MCP tool comes from the preset, never from the server. MCP's tool
 * annotations (readOnlyHint, destructiveHint…) are the server's own claims, and a server that says
 * "read-only" is not a reason to skip a person's approval; so they are ignored here. Unless the preset
 * says otherwise, every MCP tool is an external side effect, not idempotent, that wants approval.
 */
import type { ToolContract } from 'cordage'
import type { ContractOverride } from './manifest.ts'

export const DefaultTimeoutMs = 30_000

/**
 * The tool's own entry wins over the server's `defaults`, field by field. `idempotent` and
 * `needsApproval`, when neither sets them, follow the side effect: a read-only tool is safe to repeat
 * and needs no approval; anything else is neither.
 */
export function contractOf(defaults: ContractOverride, own: ContractOverride = {}): ToolContract {
  const sideEffect = own.sideEffect ?? defaults.sideEffect ?? 'external'
  return {
    sideEffect,
    idempotent: own.idempotent ?? defaults.idempotent ?? sideEffect === 'none',
    needsApproval: own.needsApproval ?? defaults.needsApproval ?? sideEffect !== 'none',
    timeoutMs: own.timeoutMs ?? defaults.timeoutMs ?? DefaultTimeoutMs,
    retries: own.retries ?? defaults.retries ?? 0,
  }
}
