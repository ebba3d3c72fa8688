/**
 * The registry keeps every tool plugins register; `visible` is what the model may see in a step.
 * Registration is tied to the registering plugin: when that plugin is disposed (or swapped), its tools
 * leave with it, so a reloaded plugin never leaves a stale tool behind.
 */
import { Service, type Context } from 'cordis'
import { CordageError, globPattern, pluginOf, type Tool, type ToolsService, type VisibleInput, type Glob } from 'cordage'
import type { Config } from './manifest.ts'

export class ToolRegistry extends Service implements ToolsService {
  static reusable = true
  private tools = new Map<string, Tool>()
  private visibleCache: Tool[] | undefined
  private include: Glob[]
  private exclude: Glob[]

  constructor(ctx: Context, config: Config) {
    super(ctx, 'tools', true)
    this.include = config.include.map(globPattern)
    this.exclude = config.exclude.map(globPattern)
  }

  register(tool: Tool): () => void {
    // Called through `ctx.tools`, `this.ctx` is the caller's context: the plugin that owns the tool.
    const caller = this.ctx
    const existing = this.tools.get(tool.name)
    if (existing) {
      throw new CordageError(
        'plugin_conflict',
        `tool "${tool.name}" is already registered by ${existing.owner ?? 'another plugin'}; tool names are unique per agent`,
      )
    }
    if (typeof tool.invoke !== 'function' || typeof tool.input?.safeParse !== 'function') {
      throw new CordageError('invalid_input', `tool "${tool.name}" was not built with defineTool (it lacks invoke or input.safeParse)`)
    }
    const registered: Tool = Object.freeze({ ...tool, owner: pluginOf(caller) })
    this.tools.set(tool.name, registered)
    this.visibleCache = undefined
    const remove = () => {
      if (this.tools.get(tool.name) === registered) {
        this.tools.delete(tool.name)
        this.visibleCache = undefined
      }
    }
    return caller.effect(() => remove)
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name)
  }

  list(): Tool[] {
    return [...this.tools.values()]
  }

  visible(_input: VisibleInput): Tool[] {
    return (this.visibleCache ??= this.list().filter(
      (tool) => this.include.some((re) => re.test(tool.name)) && !this.exclude.some((re) => re.test(tool.name)),
    ))
  }
}
