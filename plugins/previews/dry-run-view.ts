/**
 * @module dry-run-view
 * The views the model is shown, with an optional boolean `dry_run` on each tool that declares a
 * preview and has no `dry_run` of its own: a copy of its schema, the tool is never changed. The kernel
 * takes such a `dry_run` out of the call and runs the call as a dry run (core/kernel/preview.ts).
 */
import type { Tool, ToolView } from 'cordage'

export const DryRunArg = 'dry_run'

const Property = Object.freeze({
  type: 'boolean',
  description: 'true: do nothing, only show what this call would do (its preview). Allowed like a read.',
})

/** Whether a dry run is offered for this tool: it declares a preview and its schema has no `dry_run` of its own. */
export function offersDryRun(tool: Pick<Tool, 'preview' | 'inputSchema'> | undefined): boolean {
  if (typeof tool?.preview !== 'function') return false
  const props = (tool.inputSchema as { properties?: unknown } | undefined)?.properties
  return !(props && typeof props === 'object' && Object.hasOwn(props, DryRunArg))
}

/** The view with `dry_run` when it is offered for `tool`, else the view itself. */
export function dryRunView(tool: Pick<Tool, 'preview' | 'inputSchema'> | undefined, view: ToolView): ToolView {
  if (!offersDryRun(tool)) return view
  const schema = view.inputSchema as { properties?: Record<string, unknown> }
  return { ...view, inputSchema: { ...schema, type: 'object', properties: { ...(schema.properties ?? {}), [DryRunArg]: Property } } }
}

/**
 * The step's views with `dry_run` where it is offered. The kernel hands the same list to every run
 * and step while the visible tools stay the same, so what it comes to is kept for that list: the same
 * answer every step, and nothing to redo.
 */
export function withDryRuns(views: readonly ToolView[], tool: (name: string) => Tool | undefined): ToolView[] {
  const found = made.get(views)
  if (found && found.tools.every((t, i) => t === tool(views[i].name))) return found.views
  const tools = views.map((v) => tool(v.name))
  const each = views.map((v, i) => dryRunView(tools[i], v))
  // Nothing offered: the kernel's own list, so it has nothing to take in.
  const shown = each.some((v, i) => v !== views[i]) ? each : (views as ToolView[])
  made.set(views, { tools, views: shown })
  return shown
}

const made = new WeakMap<readonly ToolView[], { tools: (Tool | undefined)[]; views: ToolView[] }>()
