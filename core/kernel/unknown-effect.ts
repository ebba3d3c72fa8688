/**
 * @module unknown-effect
 * A call whose outcome is not known (the process died mid-call, or a side-effecting call timed out or
 * lost its connection) is an unknown effect: an idempotent tool runs again with the same key, a tool
 * that can `reconcile` is asked (and what the target reported is recorded as the guardrail lets it
 * through), anything else waits for a person (WAITING_RECONCILIATION, `unknown_effect`).
 */
import type { Reconciled, Tool } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { KernelProducer } from './version.ts'
import { screenToolValue } from './tool-texts.ts'
import type { Run } from './run.ts'
import type { Stop } from './flow.ts'

/**
 * An action whose call started and has no recorded outcome (the process died, or the call timed out).
 * Returns 'retry' when it is safe to run the call again with the same key.
 */
export async function settleUnknown(
  run: Run,
  action: ActionState,
  tool: Tool,
  key: string,
  why: 'timeout' | 'connection_lost' | 'resume',
): Promise<Stop | 'settled' | 'retry'> {
  if (why === 'resume' && (tool.sideEffect === 'none' || tool.idempotent)) return 'retry'
  const found = tool.reconcile ? await reconcile(run, action, tool, key) : undefined
  if (found) {
    if (found.committed || why === 'resume') return found.committed ? 'settled' : 'retry'
    const [code, lost] =
      why === 'connection_lost'
        ? (['tool_connection_lost', 'lost its connection'] as const)
        : (['tool_timeout', `did not finish within ${tool.timeoutMs} ms`] as const)
    return { end: 'FAILED', code, reason: `${tool.name} (action ${action.id}) ${lost}, and did not take effect` }
  }
  const wasRunning =
    why === 'timeout' ? 'timed out' : why === 'connection_lost' ? 'lost its connection' : 'was running when its process stopped'
  return {
    pause: 'WAITING_RECONCILIATION',
    reason: `action ${action.id} (${tool.name}) ${wasRunning}; whether it took effect is unknown (idempotency key ${key}): settle it with cordage reconcile`,
    detail: { actionId: action.id, code: 'unknown_effect' },
  }
}

/** What the tool's `reconcile` found of the effect under `key`, recorded (tool/reconciled and the ledger); undefined when it could not tell. */
async function reconcile(run: Run, action: ActionState, tool: Tool, key: string): Promise<Reconciled> {
  let found: Reconciled
  try {
    found = await tool.reconcile!(key, run.signal)
  } catch {
    return undefined
  }
  if (!found) return undefined
  // What the target system reported is the tool's text like a result: recorded as the guardrail lets it through.
  const shown =
    found.committed && found.output !== undefined
      ? await screenToolValue(run, { action, tool, causation: run.state.lastSeq }, found.output, 'result')
      : undefined
  run.rec.record(
    'tool/reconciled',
    {
      tool: tool.name,
      key,
      committed: found.committed,
      by: `${tool.owner ?? tool.name}:reconcile`,
      ...(found.committed ? { receipt: found.receipt, output: shown?.value } : {}),
      ...(shown?.guard ? { redacted: { guard: shown.guard } } : {}),
    },
    KernelProducer,
    run.idsOf(action.id, run.state.lastSeq),
  )
  const receipt = found.committed ? found.receipt : undefined
  await run.flush([
    { op: 'outcome', key, status: found.committed ? 'committed' : 'not_committed', receipt, output: shown?.value, at: Date.now() },
  ])
  return found
}
