/**
 * @module visible-tools
 * The tools a step may call: asked of the tools service once per step (also for a step resumed in a
 * new process), checked to be a list, and kept by name, as the views the model is shown and as names
 * for the step's context event. The same list as the step before is not rebuilt.
 */
import { CordageError } from '../contracts/errors.ts'
import { toView, type Tool, type ToolView } from '../contracts/services/tools.ts'
import { asDefined } from './tool.ts'

export class VisibleTools {
  readonly byName = new Map<string, Tool>()
  views: ToolView[] = []
  names: string[] = []
  #source: Tool[] | undefined
  #step = ''

  /** Ask (`ask`, the tools service's `visible`) for step `step`, unless it was asked already. */
  async refresh(step: string, provider: string, ask: () => unknown): Promise<void> {
    if (this.#step === step) return
    const visible = await ask()
    if (!Array.isArray(visible))
      throw new CordageError(
        'verdict_invalid',
        `tools service ${provider} returned ${typeof visible} as the visible set, not a list of tools`,
      )
    this.#step = step
    if (visible === this.#source) return
    this.#source = visible
    this.byName.clear()
    for (const tool of visible as Tool[]) this.byName.set(tool.name, asDefined(tool))
    this.views = visible.map(toView)
    this.names = visible.map((t: Tool) => t.name)
  }
}

Object.freeze(VisibleTools.prototype)
