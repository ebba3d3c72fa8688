/**
 * @module checks/tool-views
 * The check of what a `tools/before-show` handler answers (core/contracts/phases.ts): the step's tools
 * as the model is shown them. A handler may change what a view says (the previews plugin adds
 * `dry_run`); it may not add, drop, rename or reorder tools, which the kernel decides from the tools
 * service alone.
 */
import type { ShownTools } from '../phases.ts'
import { describe, own } from '../check.ts'

/** Why a handler's answer is refused, or undefined when it is the same tools, in the same order, each a view. */
export function shownToolsProblem(answer: unknown, was: ShownTools): string | undefined {
  const views = own(answer)?.views
  if (!Array.isArray(views)) return `a tools/before-show handler returns { views: [...] }, got ${describe(answer)}`
  if (views.length !== was.views.length) return `it shows ${views.length} tools, not the ${was.views.length} the tools service made visible`
  for (let i = 0; i < views.length; i++) {
    const view = own(views[i])
    if (view?.name !== was.views[i].name) return `view ${i} must be ${was.views[i].name}'s, got ${describe(view?.name)}`
    if (typeof view.description !== 'string') return `${view.name}'s description must be a string`
    if (!own(view.inputSchema)) return `${view.name}'s inputSchema must be a JSON schema object`
  }
  return undefined
}
