/**
 * @module ledger
 * The idempotency ledger, asked before a side effect (docs/concepts/durability.md has the table): a
 * key another action used with other arguments is a conflict (`idempotency_conflict`), one already
 * committed closes the action with the recorded result and the tool is not called again, one pending
 * in another run is waited for; an idempotent tool may then take the key over (the target
 * deduplicates), anything else whose effect is unknown waits for a person. Free functions over the
 * run (core/kernel/run.ts).
 */
import type { Effect } from '../contracts/services/store.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { KernelProducer } from './version.ts'
import { ledgerArtifact, relist } from './artifacts.ts'
import { observe } from './call-outcome.ts'
import { guardsOf, screenToolText, screenToolValue } from './tool-texts.ts'
import { reject } from './reject.ts'
import type { Run } from './run.ts'
import type { Stop } from './flow.ts'

/** The idempotency key of an action: the tool's own (prefixed with its name) or `<runId>/<actionId>`. */
export function keyOf(runId: string, action: ActionState, tool: Tool): string {
  const own = tool.idempotencyKey?.(action.args)
  return own ? `${tool.name}:${own}` : `${runId}/${action.id}`
}

/**
 * Look the key up before a side effect. Returns what to do instead of calling the tool, 'takeover' to
 * call it under a key another run left pending, or undefined to go ahead.
 */
export async function checkLedger(
  run: Run,
  action: ActionState,
  tool: Tool,
  key: string,
): Promise<'continue' | Stop | 'takeover' | undefined> {
  let effect = await run.store().effect(key)
  if (!effect || (effect.runId === run.runId && effect.actionId === action.id)) return undefined
  if (effect.argsHash !== action.argsHash) return conflict(run, action, key, effect)
  if (effect.status === 'pending') effect = await waitFor(run, key, effect)
  if (effect.status === 'committed') return deduplicate(run, action, tool, effect)
  if (effect.status === 'failed' || effect.status === 'not_committed') return undefined
  if (tool.idempotent) return 'takeover'
  return {
    pause: 'WAITING_RECONCILIATION',
    reason: `idempotency key ${key} of action ${action.id} (${tool.name}) belongs to ${effect.runId} ${effect.actionId}, whose effect is unknown: settle that one first`,
    detail: { actionId: action.id, code: 'unknown_effect' },
  }
}

/** Poll the ledger while another run's effect under `key` is pending, up to `effectWaitMs`. */
async function waitFor(run: Run, key: string, effect: Effect): Promise<Effect> {
  const until = Date.now() + run.agent.options.effectWaitMs
  while (effect.status === 'pending' && Date.now() < until && !run.cancelRequest) {
    await new Promise((r) => setTimeout(r, 25))
    effect = (await run.store().effect(key)) ?? effect
  }
  return effect
}

function conflict(run: Run, action: ActionState, key: string, effect: Effect): 'continue' {
  return reject(
    run,
    action,
    'idempotency_conflict',
    `Refused: idempotency key ${key} was already used by ${effect.runId} ${effect.actionId} with other arguments. Nothing was done.`,
  )
}

/** The effect already happened under this key: close the action with its recorded result. */
async function deduplicate(run: Run, action: ActionState, tool: Tool, effect: Effect): Promise<'continue'> {
  const from = { action, tool, causation: action.decision?.seq ?? action.proposedSeq }
  // The ledger holds a large result's reference, not its bytes: this run gets the same reference,
  // listed under it too (content-addressed: no second blob), so read_artifact lets it read on.
  const artifact = ledgerArtifact(effect.output)
  if (artifact && effect.runId !== run.runId) await relist(run, action, artifact)
  // Recorded by another run, maybe under another guardrail: this run's guardrail sees it before it is recorded again.
  const shown = artifact ? undefined : await screenToolValue(run, from, effect.output ?? null, 'result')
  // The tool's own observation of the effect when the ledger kept it (a citation the verifier looks for
  // is in it), else the output rendered; then a line that says it was not done again.
  const own = typeof effect.observation === 'string' ? await screenToolText(run, from, effect.observation) : undefined
  const seen = own?.text ?? observe(shown?.guard ? shown.text : (effect.output ?? null), run.agent.options.observationChars)
  const guard = guardsOf(shown?.guard, own?.guard)
  run.rec.record(
    'tool/end',
    {
      tool: tool.name,
      attempt: action.attempts,
      output: artifact ? undefined : shown!.value,
      observation: `${seen}\n(Already done under this idempotency key by ${effect.runId} ${effect.actionId}; not done again.)`,
      receipt: effect.receipt,
      durationMs: 0,
      artifact,
      deduplicated: { runId: effect.runId, actionId: effect.actionId },
      ...(guard ? { redacted: { guard } } : {}),
    },
    tool.owner ?? KernelProducer,
    run.idsOf(action.id, action.decision?.seq),
  )
  await run.flush()
  return 'continue'
}
