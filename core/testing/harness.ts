/**
 * An app for a test: a preset (an object, or a YAML file) loaded by the real host with the built-in
 * plugins, its stores swapped for store-memory, and runs returned with their events and ledger entries.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { stringify } from 'yaml'
import type { AgentRuntime, Effect, RunEvent, RunState } from '../index.ts'
import { Cordage } from '../host/app.ts'
import { loadPreset } from '../host/preset.ts'

export interface StartOptions {
  /** Folder that `path:` entries of a preset object resolve against (default: the working directory). */
  dir?: string
  /** `--set KEY=VALUE` overrides, as on the command line. */
  sets?: string[]
  /**
   * Keep the preset's own stores (a file preset using store-sqlite writes beside it). Default false:
   * every `store-*` plugin is replaced by store-memory, so runs live in the test's memory only.
   */
  keepStores?: boolean
}

/** A run as a test reads it: its final state, its events in order, and its ledger entries (side effects). */
export interface TestRun {
  state: RunState
  events: RunEvent[]
  /**
   * The calls with side effects that started, one ledger entry each (`cordage effects`); `null` when the
   * store cannot list its ledger (then {@link expectSideEffects} fails rather than count nothing).
   */
  effects: Effect[] | null
}

export interface TestApp {
  app: Cordage
  /** The agent named, or the preset's first. */
  agent(name?: string): AgentRuntime
  /** Run `task` (default: the agent's task in the preset) to its end or first pause. */
  run(task?: string, options?: { agent?: string }): Promise<TestRun>
  /** Read a run again (after approve, resume...). */
  read(runId: string, options?: { agent?: string }): Promise<TestRun>
  /** Errors the host reported while the app ran (a plugin's listener that threw): `stop` fails on them. */
  errors: unknown[]
  /** Stop the app and remove its temporary folder; fails if the host reported errors the test left in `errors`. */
  stop(): Promise<void>
}

/** Load a preset, given as an object ({@link testPreset}) or as the path of a YAML file. */
export async function startApp(preset: Record<string, unknown> | string, options: StartOptions = {}): Promise<TestApp> {
  let file: string
  let temp: string | undefined
  let sets = options.sets ?? []
  if (typeof preset === 'string') {
    file = resolve(preset)
    if (!options.keepStores) sets = [...memoryStores(file, sets), ...sets]
  } else {
    if (!preset || typeof preset !== 'object' || Array.isArray(preset))
      throw new TypeError('startApp: give a preset object (testPreset(...)) or the path of a preset file')
    temp = mkdtempSync(join(tmpdir(), 'cordage-testing-'))
    file = join(temp, 'preset.yml')
    writeFileSync(file, stringify(absolutePaths(preset, resolve(options.dir ?? '.'))))
  }
  const errors: unknown[] = []
  let app: Cordage
  try {
    // A swapped store is not what a lock file names: the lock is for the preset as written.
    app = await Cordage.fromPreset(file, { sets, lock: options.keepStores ?? false, onError: (e) => errors.push(e) })
  } catch (error) {
    if (temp) rmSync(temp, { recursive: true, force: true })
    throw error
  }
  const agent = (name?: string) => app.agent(name ?? app.agentNames()[0])
  const read = async (runId: string, opts: { agent?: string } = {}): Promise<TestRun> => {
    const runtime = agent(opts.agent)
    const store = runtime.store()
    return {
      state: await runtime.load(runId),
      events: await store.load(runId),
      effects: store.effectsOf ? await store.effectsOf(runId) : null,
    }
  }
  return {
    app,
    agent,
    errors,
    read,
    run: async (task, opts = {}) => read((await agent(opts.agent).run(task)).runId, opts),
    stop: async () => {
      await app.stop()
      if (temp) rmSync(temp, { recursive: true, force: true })
      // Errors reported on the way out arrive a turn later.
      await new Promise((r) => setImmediate(r))
      if (errors.length) throw new Error(`the host reported ${errors.length} error(s): ${errors.map(String).join('; ')}`)
    },
  }
}

/** `--set` overrides that put store-memory in place of each agent's store plugin. */
function memoryStores(file: string, sets: string[]): string[] {
  const loaded = loadPreset(file, { sets })
  const out: string[] = []
  for (const [name, spec] of Object.entries(loaded.agents)) {
    spec.plugins.forEach((ref, i) => {
      if (ref.plugin?.startsWith('store-') && ref.plugin !== 'store-memory') out.push(`agents.${name}.plugins[${i}]=store-memory`)
    })
  }
  return out
}

/** The preset with each `path:` entry made absolute, since the file is written to a temporary folder. */
function absolutePaths(preset: Record<string, unknown>, dir: string): Record<string, unknown> {
  const agents = preset.agents as Record<string, Record<string, unknown>> | undefined
  if (!agents || typeof agents !== 'object') return preset
  const fix = (entry: unknown) =>
    entry && typeof entry === 'object' && typeof (entry as { path?: unknown }).path === 'string'
      ? {
          ...entry,
          path: isAbsolute((entry as { path: string }).path)
            ? (entry as { path: string }).path
            : resolve(dir, (entry as { path: string }).path),
        }
      : entry
  const fixed: Record<string, unknown> = {}
  for (const [name, agent] of Object.entries(agents)) {
    fixed[name] = {
      ...agent,
      model: fix(agent.model),
      plugins: Array.isArray(agent.plugins) ? agent.plugins.map(fix) : agent.plugins,
    }
  }
  return { ...preset, agents: fixed }
}
