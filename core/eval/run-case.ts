/**
 * @module eval/run-case
 * Run one case under one variant, in its own scratch folder: load the prepared preset with the replay
 * layer (core/eval/replay.ts: no call with side effects reaches a real effect) and the tool faults
 * standing in for the tools they name, refuse a case that would need a real effect, start the run,
 * answer its pauses (core/eval/answers.ts: the recording's decisions, then the case's `answers` in
 * order), then read what happened (the run's state and events, and the tools' own records) and check
 * the expectations. A case that cannot run at all is a failed case with the error, never a skipped one.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import { isTerminal, type RunState } from '../index.ts'
import { Cordage, type PluginCatalog } from '../host/index.ts'
import { answer, isCaseAnswer, replayDecision } from './answers.ts'
import type { EvalCase } from './case.ts'
import { checkExpectations, type Observed } from './expect.ts'
import { toolFaults, type ToolFault } from './faults.ts'
import { prepare, type Prepared } from './prepare.ts'
import { countRecords } from './records.ts'
import { replayLayer } from './replay.ts'
import { refuseRealEffects } from './replay-check.ts'
import type { CaseRun, Check, Variant } from './result.ts'

export interface RunCaseOptions {
  preset?: string
  catalog: PluginCatalog
  /** Keep the scratch folder (its path is printed in the case's notes). */
  keep?: boolean
  /** Time limit of each case that does not set its own (ms). */
  timeoutMs?: number
  /** Told what the run did, in full, before the case's folder goes (the playground's compare view reads it). */
  inspect?: (seen: Inspected) => void
  /**
   * Refuse, before the run starts, a case whose model would call a tool with side effects that has no
   * recorded result or sandbox (core/eval/replay-check.ts). Default true. The playground's replay turns it
   * off: a recorded call that was rejected has no result, and a side whose policy lets it run shows the
   * call refused (`replay_refused`) where it comes, which is what the comparison is for.
   */
  refuseUncovered?: boolean
  /** Where the case's recorded calls come from, for messages (default: the case's file). */
  recordedFrom?: string
}

export interface Inspected {
  state: RunState
  events: RunEvent[]
  prepared: Prepared
  /**
   * What the engine gave the run, in words: the case's answers (`approved s1.a1 as eval`), the recorded
   * decisions replayed (`alice's recorded approval of s1.a1 (charge_card) replayed as replay:alice`), and
   * the calls answered from the recording or refused.
   */
  given: string[]
}

/** At most this many pauses are answered: a run that keeps pausing is stopped where it stands. */
const MaxPauses = 50
/** How long a case may take, from its run's start, when neither the case nor the command says. */
export const DefaultTimeoutMs = 300_000
/** Scratch folders of cases in progress, so an interrupted `cordage eval` can remove them. */
export const liveScratch = new Set<string>()

export async function runCase(c: EvalCase, variant: Variant, options: RunCaseOptions): Promise<CaseRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'cordage-eval-'))
  liveScratch.add(scratch)
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
    // One list, in the order things happened: the answers given, the recorded decisions replayed, the calls answered or refused.
    const given: string[] = []
    const replay = replayLayer({ sandbox: c.sandbox, recorded: c.recorded, source: options.recordedFrom ?? `the case ${c.shown}` }, given)
    app = await Cordage.fromPreset(prepared.presetFile, {
      catalog: options.catalog,
      lock: false,
      // The faults break the call the replay layer lets through (the sandboxed tool, or the recorded answer).
      interceptTool: (agent, tool) => faults.intercept(agent, replay.intercept(agent, tool)),
      onError: (error) => logs.push((error as Error).message ?? String(error)),
      log: (line) => logs.push(line),
    })
    const runtime = app.agent(prepared.agent)
    const registered = runtime.ctx.tools.list().map((t) => t.name)
    const unused = faults.unused(registered)
    if (unused.length)
      throw new CordageError(
        'invalid_input',
        `${c.shown}: faults name tool(s) ${unused.join(', ')} that agent "${prepared.agent}" does not have`,
      )
    if (options.refuseUncovered !== false) refuseRealEffects(c, { app, agent: prepared.agent, scratch, presetDir: prepared.presetDir })
    run.startupMs = Math.round(performance.now() - t0)

    const t1 = performance.now()
    const deadline = Date.now() + (c.timeoutMs ?? options.timeoutMs ?? DefaultTimeoutMs)
    const handle = runtime.start(prepared.task)
    run.runId = handle.runId
    const wait = (done: Promise<RunState>) => bounded(done, deadline, runtime, handle.runId)
    let state = await wait(handle.done)
    const answers = [...c.answers]
    for (let i = 0; i < MaxPauses && !isTerminal(state.status); i++) {
      // A decision the recording holds for the very call waiting comes first; the case's answers after.
      const replayed = await replayDecision(runtime, state, replay, wait, given)
      if (typeof replayed === 'string') {
        ;(run.notes ??= []).push(replayed)
        break
      }
      if (replayed) {
        state = replayed
        continue
      }
      const next = await answer(runtime, state, answers[0], wait, given)
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
    const unusedAnswers = answers.length > 0
    run.latencyMs = Math.round(performance.now() - t1)
    const events = await runtime.store().read(state.runId)
    // What was replayed goes into the notes; the case's own answers are the case's to read.
    const replayed = given.filter((g) => !isCaseAnswer(g))
    if (replayed.length) (run.notes ??= []).push(...replayed)
    options.inspect?.({ state, events, prepared, given })
    // An approval the case meant to give that was never asked for: say what the policy decided instead.
    if (unusedAnswers) for (const denied of denials(events)) (run.notes ??= []).push(denied)
    observe(run, state, events, prepared)
    run.checks = [
      ...checkExpectations(withDefaults(c), observed(run, state, events)),
      ...faultChecks(c, faults.injected(), events),
      ...excludedToolChecks(c, registered, events),
    ]
    run.ok = run.checks.every((k) => k.ok)
    // Verified: the run completed and the case's every expectation held; a completion with a wrong
    // answer, or with an effect it should not have had, is not a success.
    run.verifiedSuccess = state.status === 'COMPLETED' && run.ok
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
    liveScratch.delete(scratch)
  }
  if (logs.length && !run.ok) (run.notes ??= []).push(...logs.slice(-5).map((l) => `log: ${clean(l, scratch)}`))
  return run
}

type Runtime = ReturnType<Cordage['agent']>

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

/** Messages name the case's scratch copy, relative to the working directory or absolute (the relative form first: it holds the absolute one's tail). */
function clean(text: string, scratch: string): string {
  let out = text
  for (const form of [relative(process.cwd(), scratch), scratch])
    out = out.replaceAll(`${form}/preset/`, '').replaceAll(form, '<case folder>')
  return out
}

/**
 * The run's end, or a cancel when the case's time is up: a case never hangs the suite. A run that does
 * not stop within a grace period after the cancel is left behind (the app is stopped anyway).
 */
async function bounded(done: Promise<RunState>, deadline: number, runtime: Runtime, runId: string): Promise<RunState> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))
  })
  try {
    const first = await Promise.race([done, late])
    if (first !== 'late') return first
  } finally {
    clearTimeout(timer)
  }
  await runtime.cancel(runId, { by: 'eval', waitMs: 5000 }).catch(() => undefined)
  throw new CordageError('deadline_exceeded', `the case did not finish within its time limit (timeoutMs); the run was cancelled`)
}

/**
 * An `excludes` selector naming a tool that is neither the agent's nor one the model asked for passes
 * whatever happened: most likely a misspelling. (A tool the model made up, `tool/decision[refund_order]`,
 * is in the run's events, and excluding what follows from it is a real check.)
 */
function excludedToolChecks(c: EvalCase, registered: string[], events: RunEvent[]): Check[] {
  const seen = new Set(events.map((e) => (e.data as { tool?: unknown }).tool).filter((t): t is string => typeof t === 'string'))
  const named = new Set((c.expect.events?.excludes ?? []).flatMap((t) => [...t.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1])))
  return [...named]
    .filter((tool) => !registered.includes(tool) && !seen.has(tool))
    .map((tool) => ({
      name: `events.excludes[${tool}]`,
      ok: false,
      expected: `${tool} is a tool of the agent or one the model called`,
      actual: `neither (the agent has ${registered.join(', ')}): a misspelt name is never there, so excluding it checks nothing`,
    }))
}

/** Each action the policy denied, in words, with its rule and reason. */
function denials(events: RunEvent[]): string[] {
  return events.flatMap((e) => {
    if (e.type !== 'tool/decision' || e.data.verdict !== 'deny') return []
    const tool = events.find((p) => p.type === 'tool/proposed' && p.actionId === e.actionId)
    const name = tool?.type === 'tool/proposed' ? ` ${tool.data.tool}` : ''
    return [
      `${e.actionId}${name} was denied by policy (rule ${e.data.ruleId ?? '-'}${e.data.reason ? `: ${e.data.reason}` : ''}), so no approval was asked`,
    ]
  })
}

/** A fault that never fired tested nothing: each is a check that fails when it did not happen. */
function faultChecks(c: EvalCase, injected: Record<string, number>, events: RunEvent[]): Check[] {
  const checks: Check[] = []
  const byTool = new Map<string, number>()
  for (const [i, f] of c.faults.entries()) {
    if ('tool' in f) {
      // Several faults on one tool share its count: each is checked once the tool's total is known.
      byTool.set(f.tool, (byTool.get(f.tool) ?? 0) + 1)
      const n = injected[f.tool] ?? 0
      checks.push({
        name: `faults[${i}]`,
        ok: n >= byTool.get(f.tool)!,
        expected: `${f.kind} on ${f.tool} injected`,
        actual: n ? `injected ${n} time(s)` : `never: the run made no call to ${f.tool}`,
      })
    } else if ('model' in f) {
      const n = events.filter((e) => e.type === 'step/model-error' && (e.data as { code?: string }).code === `model_${f.model}`).length
      checks.push({
        name: `faults[${i}]`,
        ok: n > 0,
        expected: `model_${f.model} at call ${f.call}`,
        actual: n ? `recorded ${n} time(s)` : 'never: the run did not reach that call',
      })
    }
  }
  return checks
}
