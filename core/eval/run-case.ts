/**
 * @module eval/run-case
 * Run one case under one variant, in its own scratch folder: load the prepared preset with the tool
 * faults standing in for the tools they name, start the run, answer its pauses from the case's
 * `answers` (in order), then read what happened (the run's state and events, and the tools' own
 * records) and check the expectations. A case that cannot run at all is a failed case with the
 * error, never a skipped one.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import { isTerminal, type RunState } from '../index.ts'
import { Cordage, type PluginCatalog } from '../host/index.ts'
import type { Answer, EvalCase } from './case.ts'
import { checkExpectations, type Observed } from './expect.ts'
import { toolFaults, type ToolFault } from './faults.ts'
import { prepare, type Prepared } from './prepare.ts'
import { countRecords } from './records.ts'
import type { CaseRun, Variant } from './result.ts'

export interface RunCaseOptions {
  preset?: string
  catalog: PluginCatalog
  /** Keep the scratch folder (its path is printed in the case's notes). */
  keep?: boolean
}

/** At most this many pauses are answered: a run that keeps pausing is stopped where it stands. */
const MaxPauses = 50

export async function runCase(c: EvalCase, variant: Variant, options: RunCaseOptions): Promise<CaseRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'cordage-eval-'))
  const run: CaseRun = {
    case: c.name,
    file: c.shown,
    variant: variant.id,
    ok: false,
    checks: [],
    verifiedSuccess: false,
    steps: 0,
    tokens: 0,
    costUsd: 0,
    latencyMs: 0,
    startupMs: 0,
    sideEffects: {},
    duplicates: {},
    events: [],
  }
  let app: Cordage | undefined
  const logs: string[] = []
  try {
    const t0 = performance.now()
    const prepared = await prepare(c, variant, { preset: options.preset, catalog: options.catalog, scratch })
    if (prepared.notes.length) run.notes = [...prepared.notes]
    const faults = toolFaults(c.faults.filter((f): f is ToolFault => 'tool' in f))
    app = await Cordage.fromPreset(prepared.presetFile, {
      catalog: options.catalog,
      lock: false,
      interceptTool: (agent, tool) => faults.intercept(agent, tool),
      onError: (error) => logs.push((error as Error).message ?? String(error)),
      log: (line) => logs.push(line),
    })
    const runtime = app.agent(prepared.agent)
    const unused = faults.unused(runtime.ctx.tools.list().map((t) => t.name))
    if (unused.length)
      throw new CordageError(
        'invalid_input',
        `${c.shown}: faults name tool(s) ${unused.join(', ')} that agent "${prepared.agent}" does not have`,
      )
    run.startupMs = Math.round(performance.now() - t0)

    const t1 = performance.now()
    let state = await runtime.run(prepared.task)
    const answers = [...c.answers]
    for (let i = 0; i < MaxPauses && !isTerminal(state.status); i++) {
      const next = await answer(runtime, state, answers[0])
      if (typeof next === 'string') {
        // The run did not pause where the case expected (a variant changed its path): it stays where it
        // stands, and the expectations say what that means.
        if (next) (run.notes ??= []).push(next)
        break
      }
      answers.shift()
      state = next
    }
    if (answers.length && isTerminal(state.status))
      (run.notes ??= []).push(`the run ended ${state.status} with ${answers.length} answer(s) of the case not used`)
    run.latencyMs = Math.round(performance.now() - t1)
    const events = await runtime.store().read(state.runId)
    observe(run, state, events, prepared)
    run.checks = checkExpectations(withDefaults(c), observed(run, state, events))
    run.ok = run.checks.every((k) => k.ok)
    run.verifiedSuccess = state.status === 'COMPLETED' && run.checks.filter((k) => k.name.startsWith('answer')).every((k) => k.ok)
    const injected = Object.entries(faults.injected()).filter(([, n]) => n > 0)
    if (injected.length) (run.notes ??= []).push(`faults injected: ${injected.map(([t, n]) => `${t} ×${n}`).join(', ')}`)
  } catch (error) {
    run.error = {
      code: CordageError.is(error) ? error.code : 'internal_error',
      message: clean((error as Error).message ?? String(error), scratch),
    }
    run.ok = false
  } finally {
    await app?.stop().catch(() => {})
    if (options.keep) (run.notes ??= []).push(`scratch folder kept: ${scratch}`)
    else rmSync(scratch, { recursive: true, force: true })
  }
  if (logs.length && !run.ok) (run.notes ??= []).push(...logs.slice(-5).map((l) => `log: ${clean(l, scratch)}`))
  return run
}

type Runtime = ReturnType<Cordage['agent']>

/** Give the next answer to the pause the run is in: the state after it, or why it was not given ('' when no answer is left). */
async function answer(runtime: Runtime, state: RunState, next: Answer | undefined): Promise<RunState | string> {
  if (!next) return ''
  const actionId = state.waiting?.actionId
  if (state.status === 'WAITING_APPROVAL' && actionId && ('approve' in next || 'reject' in next)) {
    const handle =
      'approve' in next
        ? await runtime.approve(state.runId, actionId, { by: next.by, reason: next.reason })
        : await runtime.reject(state.runId, actionId, { by: next.by, reason: next.reason })
    return handle.done
  }
  if (state.status === 'WAITING_RECONCILIATION' && actionId && 'reconcile' in next)
    return (await runtime.reconcile(state.runId, actionId, next.reconcile === 'committed', { by: next.by })).done
  if (state.status === 'WAITING_USER' && 'input' in next) return (await runtime.resume(state.runId, { input: next.input })).done
  return `the run paused in ${state.status}${actionId ? ` on ${actionId}` : ''}, where the case's next answer (${Object.keys(next)[0]}) does not fit: it was left there`
}

function observe(run: CaseRun, state: RunState, events: RunEvent[], prepared: Prepared): void {
  run.runId = state.runId
  run.status = state.status
  run.failureCode = state.failureCode
  run.answer = state.answer
  run.steps = state.steps
  run.tokens = state.usage.inputTokens + state.usage.outputTokens
  run.costUsd = state.usage.costUsd
  run.events = events.map((e) => {
    const tool = (e.data as { tool?: unknown } | undefined)?.tool
    return e.type.startsWith('tool/') && typeof tool === 'string' ? `${e.type}[${tool}]` : e.type
  })
  for (const [name, r] of Object.entries(prepared.records)) {
    const counted = countRecords(r.file, r.key)
    run.sideEffects[name] = counted.count
    run.duplicates[name] = counted.duplicates
  }
}

function observed(run: CaseRun, state: RunState, events: RunEvent[]): Observed {
  return {
    status: state.status,
    failureCode: state.failureCode,
    answer: state.answer,
    steps: run.steps,
    tokens: run.tokens,
    costUsd: run.costUsd,
    events,
    sideEffects: run.sideEffects,
    duplicates: run.duplicates,
  }
}

/** A named record with no duplicates expectation is expected to have none: an effect done twice is a failure unless a case says otherwise. */
function withDefaults(c: EvalCase): EvalCase['expect'] {
  const duplicates = { ...Object.fromEntries(Object.keys(c.records).map((n) => [n, 0])), ...c.expect.duplicates }
  return Object.keys(duplicates).length ? { ...c.expect, duplicates } : c.expect
}

function clean(text: string, scratch: string): string {
  return text.replaceAll(`${scratch}/preset/`, '').replaceAll(scratch, '<case folder>')
}
