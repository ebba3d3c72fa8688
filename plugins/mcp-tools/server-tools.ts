/**
 * One server's tools in the registry, following the server's list: after each (re)connect and each
 * tools/list_changed, new tools are registered, removed ones unregistered, and changed ones (schema,
 * description, contract) replaced. At start every problem is an error; later, when no one can be told
 * but the log, a tool with a problem is skipped and the rest carry on.
 */
import { CordageError, globPattern, type Code, type Tool } from 'cordage'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import type { ServerSpec } from './config.ts'
import { contractOf } from './contract.ts'
import { mcpTool, type McpToolOptions } from './mcp-tool.ts'
import { closest } from 'cordage/kit'
import { isValidName, registryName } from './naming.ts'

export interface ServerToolsOptions {
  register(tool: Tool): () => void
  call: McpToolOptions['call']
  /** A problem (`warn`, the default) or a change (`info`). */
  log(message: string, level?: 'info' | 'warn'): void
}

interface Registered {
  name: string
  fingerprint: string
  unregister: () => void
}

interface Problem {
  code: Code
  message: string
}

export class ServerTools {
  /** By the server's name for the tool. */
  private registered = new Map<string, Registered>()

  constructor(
    private spec: ServerSpec,
    private options: ServerToolsOptions,
  ) {}

  /** Registry names of the tools registered now. */
  names(): string[] {
    return [...this.registered.values()].map((r) => r.name)
  }

  /**
   * Bring the registry in line with `list`.
   * @param strict throw on any problem (at start: the plugin does not start); otherwise log and skip
   * @throws CordageError `plugin_config_invalid` (unknown tool in `tools`, a name that needs `rename`) or `plugin_conflict`
   */
  sync(list: McpTool[], strict: boolean): void {
    const { config, where } = this.spec
    const problems: Problem[] = []
    const known = list.map((t) => t.name)
    for (const name of Object.keys(config.tools)) {
      if (known.includes(name)) continue
      const hint = closest(name, known)
      problems.push({
        code: 'plugin_config_invalid',
        message: `${where}.tools["${name}"]: the server has no tool "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}; it has: ${known.join(', ') || 'no tools'}`,
      })
    }

    const include = config.include.map(globPattern)
    const exclude = config.exclude.map(globPattern)
    // A pattern that matches nothing is a typo that would hide a tool until the model asks for it.
    for (const [field, patterns] of [
      ['include', config.include],
      ['exclude', config.exclude],
    ] as const) {
      for (const [i, pattern] of patterns.entries()) {
        if (known.some((name) => globPattern(pattern).test(name))) continue
        const hint = closest(pattern, known)
        problems.push({
          code: 'plugin_config_invalid',
          message: `${where}.${field}[${i}]: "${pattern}" matches no tool of the server${hint ? ` (did you mean "${hint}"?)` : ''}; it has: ${known.join(', ') || 'no tools'}`,
        })
      }
    }
    const wanted = new Map<string, { def: McpTool; name: string }>()
    const byName = new Map<string, string>()
    for (const def of list) {
      if (!include.some((re) => re.test(def.name)) || exclude.some((re) => re.test(def.name))) continue
      const name = registryName(this.spec.name, def.name, config.tools[def.name]?.rename)
      const fix = `set ${where}.tools["${def.name}"].rename, or leave the tool out with ${where}.exclude`
      if (!isValidName(name)) {
        problems.push({
          code: 'plugin_config_invalid',
          message: `${where}: tool "${def.name}" would be registered as "${name}", longer than the 64 characters a tool name may have; ${fix}`,
        })
        continue
      }
      const other = byName.get(name)
      if (other !== undefined) {
        problems.push({
          code: 'plugin_config_invalid',
          message: `${where}: tools "${other}" and "${def.name}" would both be registered as "${name}"; ${fix}`,
        })
        continue
      }
      byName.set(name, def.name)
      wanted.set(def.name, { def, name })
    }
    for (const name of Object.keys(config.tools)) {
      if (known.includes(name) && !wanted.has(name))
        problems.push({
          code: 'plugin_config_invalid',
          message: `${where}.tools["${name}"]: a contract for a tool that include/exclude leave out; include the tool, or drop its entry`,
        })
    }
    if (strict && problems.length) throw combined(problems)
    for (const p of problems) this.options.log(p.message)

    const removed: string[] = []
    for (const [tool, entry] of this.registered) {
      if (wanted.get(tool)?.name === entry.name) continue
      entry.unregister()
      this.registered.delete(tool)
      removed.push(entry.name)
    }
    const added: string[] = []
    for (const { def, name } of wanted.values()) {
      const contract = contractOf(config.defaults, config.tools[def.name])
      const fingerprint = JSON.stringify([name, def.description, def.title, def.inputSchema, contract])
      const existing = this.registered.get(def.name)
      if (existing?.fingerprint === fingerprint) continue
      if (existing) {
        existing.unregister()
        this.registered.delete(def.name)
      }
      const { tool, degraded } = mcpTool(def, {
        server: this.spec.name,
        name,
        contract,
        call: this.options.call,
        redact: (v) => this.spec.secrets.redactDeep(v),
      })
      if (degraded)
        this.options.log(`tool "${def.name}": its input schema cannot be checked whole here (${degraded}); the server checks what is left`)
      try {
        this.registered.set(def.name, { name, fingerprint, unregister: this.options.register(tool) })
        if (!existing) added.push(name)
      } catch (error) {
        const problem: Problem = {
          code: CordageError.is(error) ? error.code : 'plugin_start_failed',
          message: `${where}: cannot register "${name}": ${(error as Error).message}; ${`rename it with ${where}.tools["${def.name}"].rename, or leave it out with ${where}.exclude`}`,
        }
        if (strict) throw combined([problem])
        this.options.log(problem.message)
      }
    }
    if (!strict && (added.length || removed.length)) {
      this.options.log(
        `tools now: ${this.names().join(', ') || 'none'}${added.length ? `; added ${added.join(', ')}` : ''}${removed.length ? `; removed ${removed.join(', ')}` : ''}`,
        'info',
      )
    }
  }
}

function combined(problems: Problem[]): CordageError {
  const message =
    problems.length === 1 ? problems[0].message : `${problems.length} problems:\n  ${problems.map((p) => p.message).join('\n  ')}`
  return new CordageError(problems[0].code, message)
}
