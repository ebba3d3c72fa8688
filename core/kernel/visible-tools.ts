/**
 * @module visible-tools
 * The tools a step may call: asked of the tools service once per step (also for a step resumed in a
 * new process), checked to be a list, and kept by name, as the views the model is shown and as names
 * for the step's context event. The same list as the step before is not rebuilt; neither is a list
 * another run was shown, when the service hands out the same one again (the registry keeps its visible
 * list until a tool comes or goes): what a list comes to is built once and shared, frozen, by every run
 * shown it, so a run's start does not cost more the more tools there are. The views are then what the
 * `tools/before-show` handlers make of them (checked: the same tools, in the same order), and the tools
 * whose view offers a `dry_run` of the kernel's are noted (core/kernel/preview.ts).
 */
import { CordageError } from '../contracts/errors.ts'
import { toView, type Tool, type ToolView } from '../contracts/services/tools.ts'
import type { ShownTools } from '../contracts/phases.ts'
import { asDefined } from './tool.ts'
import { offersDryRun } from './dry-run.ts'
import { isThenable } from './bounded.ts'

/**
 * What one visible list comes to. Runs share it, so all of it is frozen (the arrays are typed as the
 * contracts take them, `ToolView[]` and `string[]`, and refuse changes at run time).
 */
interface Derived {
  /** The list's tools as they were when this was built: a list changed in place is built again. */
  readonly tools: readonly Tool[]
  readonly byName: ReadonlyMap<string, Tool>
  readonly views: ToolView[]
  readonly names: string[]
}

/** The run's `tools/before-show` handlers, passed the views (core/kernel/step-tools.ts). */
type Show = (was: ShownTools) => ShownTools | Promise<ShownTools>

/** Built lists by the list the tools service returned; an entry goes when nothing holds its list any more. */
const built = new WeakMap<readonly unknown[], Derived>()

export class VisibleTools {
  byName: ReadonlyMap<string, Tool> = new Map()
  views: ToolView[] = Object.freeze([]) as never
  names: string[] = Object.freeze([]) as never
  /** The tools whose view offers `dry_run` (a dry run of the kernel's, not an argument of the tool's). */
  dryRuns: ReadonlySet<string> = new Set()
  #source: readonly unknown[] | undefined
  #built: ToolView[] = []
  #shown: ToolView[] | undefined
  #step = ''

  /** The step the list was last asked for. */
  get step(): string {
    return this.#step
  }

  /**
   * Ask (`ask`, the tools service's `visible`) for step `step`, unless it was asked already, and pass
   * the views by `show` (the run's tools/before-show handlers, core/kernel/step-tools.ts). Nothing to
   * wait for (undefined) when both answer at once, as the registry and a step without handlers do.
   */
  refresh(step: string, provider: string, ask: () => unknown, show: Show): Promise<void> | undefined {
    if (this.#step === step) return
    const take = (visible: unknown) => {
      if (!Array.isArray(visible))
        throw new CordageError(
          'verdict_invalid',
          `tools service ${provider} returned ${typeof visible} as the visible set, not a list of tools`,
        )
      if (visible !== this.#source) ({ byName: this.byName, views: this.#built, names: this.names } = derive((this.#source = visible)))
      const shown = show({ views: this.#built })
      return isThenable(shown) ? shown.then(({ views }) => this.#show(step, views)) : this.#show(step, shown.views)
    }
    const visible = ask()
    return isThenable(visible) ? visible.then(take) : take(visible)
  }

  #show(step: string, views: ToolView[]): undefined {
    this.#step = step
    if (views === this.#shown) return
    // A handler's list is copied once (frozen), and again only when it hands out another one.
    this.#shown = views
    this.views = views === this.#built ? views : (Object.freeze(views.map((v) => Object.freeze({ ...v }))) as ToolView[])
    this.dryRuns = new Set(this.views.filter((v) => offersDryRun(v, this.byName.get(v.name))).map((v) => v.name))
  }
}

/** The list's views, names and tools by name: built once per list, found again while it holds the same tools. */
function derive(visible: readonly Tool[]): Derived {
  const found = built.get(visible)
  if (found && sameTools(found.tools, visible)) return found
  const byName = new Map<string, Tool>()
  for (const tool of visible) byName.set(tool.name, asDefined(tool))
  const derived: Derived = Object.freeze({
    tools: Object.freeze(visible.slice()),
    byName,
    views: Object.freeze(visible.map((tool) => Object.freeze(toView(tool)))) as ToolView[],
    names: Object.freeze(visible.map((tool) => tool.name)) as string[],
  })
  built.set(visible, derived)
  return derived
}

function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  return a.length === b.length && a.every((tool, i) => tool === b[i])
}

Object.freeze(VisibleTools.prototype)
