/**
 * @module context-step
 * What the model sees this step: the context service's projection (checked strictly), compacted when it
 * is over the threshold by the compactor, whose answer is checked (and recorded, used or not: a
 * compaction that breaks the projection's promises is not used), passed by the `step/before-model`
 * handlers (checked again), then recorded as step/context. Free functions over the run.
 */
import { checkCompacted, type CompactResult } from '../contracts/services/compactor.ts'
import type { Projection } from '../contracts/services/context.ts'
import type { ToolView } from '../contracts/services/tools.ts'
import { isControl } from './control.ts'
import type { EventIds } from './recorder.ts'
import { checkProjection } from '../contracts/checks/context.ts'
import { intercepted, serial } from './phases.ts'
import { refreshTools } from './step-tools.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'
import type { Stop } from './flow.ts'

/** The step's projection and the tools shown with it, or how the run stops when it cannot have one. */
export function* projectContext(run: Run, ids: EventIds): Flow<{ projection: Projection; views: ToolView[] } | Stop> {
  const { context, compactor } = run.services
  yield refreshTools(run)
  const views = run.visible.views

  const asking = run.ask('context', context.provider, () => context.value.assemble({ state: run.view, tools: views }))
  const assembled = checkProjection(yield* wait(asking), run.checkedMessages)
  if (!assembled.ok)
    return {
      end: 'FAILED',
      code: 'verdict_invalid',
      reason: `context service ${context.provider} returned something that is not a projection: ${assembled.problem}`,
    }
  let projection = assembled.value
  run.checkedMessages = { list: projection.messages, length: projection.messages.length }
  const threshold = compactor?.value.threshold ?? run.agent.options.contextTokens
  if (compactor && threshold && projection.tokens > threshold) {
    projection = yield* wait(compact(run, projection, threshold, ids))
    if (run.cancelRequest) return { cancelled: true }
  }
  // `step/before-model` handlers may change what the model reads; what they answer is checked whole.
  if (intercepted(run, 'step/before-model'))
    projection = yield* wait(
      serial(run, 'step/before-model', projection, (answer) => {
        const checked = checkProjection(answer)
        return checked.ok ? undefined : `a step/before-model handler answers { messages, tokens }: ${checked.problem}`
      }),
    )
  const { messages, tokens } = projection
  run.rec.record('step/context', { messages: messages.length, tokens, tools: run.visible.names }, context.provider, ids)
  return { projection, views }
}

/**
 * A projection over the threshold, compacted. A compaction that breaks the projection's promises (or
 * throws) is recorded and not used: the model then sees the whole projection, which is over the limit
 * but complete.
 */
async function compact(run: Run, projection: Projection, threshold: number, ids: EventIds): Promise<Projection> {
  const compactor = run.services.compactor!
  const limit = Math.min(threshold, run.agent.options.contextTokens ?? threshold)
  const strategy = compactor.value.strategy ?? compactor.provider
  run.rec.record('compaction/start', { strategy, tokens: projection.tokens, limit }, compactor.provider, ids)
  let compacted: CompactResult | undefined
  let problem: string | undefined
  let control: unknown
  try {
    const answer = await run.ask('compactor', compactor.provider, () =>
      compactor.value.compact({ state: run.view, projection, limit, signal: run.signal }),
    )
    const shape = checkProjection(answer)
    if (!shape.ok) problem = `the compactor answered something that is not a projection (verdict_invalid): ${shape.problem}`
    else problem = checkCompacted(projection, (compacted = answer as CompactResult), limit)
  } catch (error) {
    if (isControl(error)) control = error
    problem = `the compactor failed: ${(error as Error)?.message ?? error}`
  }
  const used = !problem
  // A summary reused or extended from one step to the next stands for every seq summarised so far: the
  // record says only what this compaction adds to the last one, so it does not grow with the run.
  const all = used ? compacted!.summarised : []
  const from = used ? extensionOf(run.lastCompaction?.summarised, all) : undefined
  const end = run.rec.record(
    'compaction/end',
    {
      strategy,
      before: projection.tokens,
      after: used ? compacted!.tokens : projection.tokens,
      summarised: from === undefined ? all : all.slice(from),
      extends: from === undefined ? undefined : run.lastCompaction!.seq,
      kept: used ? compacted!.messages.length : projection.messages.length,
      usage: compacted?.usage,
      rejected: problem,
    },
    compactor.provider,
    ids,
  )
  if (used) run.lastCompaction = { seq: end.seq, summarised: all }
  // A compactor that hangs ends the run (after its compaction/end is on record), like any service.
  if (control) throw control
  return used ? compacted! : projection
}

/**
 * Where `next` goes on from `previous` (its length) when it begins with every seq of `previous`, in the
 * same order; undefined when it does not (or there is no previous). The same list again costs nothing.
 */
function extensionOf(previous: readonly number[] | undefined, next: readonly number[]): number | undefined {
  if (!previous || next.length < previous.length) return undefined
  if (next !== previous) for (let i = 0; i < previous.length; i++) if (next[i] !== previous[i]) return undefined
  return previous.length
}
