/**
 * @module tool-search/visibility
 * Which registered tools an agent may see at a given step, before any ranking: the environment the
 * agent runs in, who the agent is, a static deny list, and the phase of the run. Visibility is not
 * permission: policy still decides every call. Hiding a tool keeps it out of the model's choices (and
 * its schema out of the prompt); a call to it is refused as `unknown_tool`.
 */
import { globPattern, type SideEffect, type Tool, type Glob } from 'cordage'

/** Tags of this form say which environments a tool belongs to: `env:dev`, `env:prod`. */
export const EnvironmentTag = 'env:'

export interface Phase {
  /** The phase lasts up to and including this step (1 is the first step), after the phase before it. */
  until: number
  /** Tools with any of these tags are visible during the phase. */
  tags: string[]
  /** Tools whose name matches any of these patterns are visible during the phase. */
  tools: string[]
  /** Tools with any of these side-effect classes are visible during the phase. */
  sideEffects: SideEffect[]
}

export interface VisibilityConfig {
  /** The environment the agent runs in; tools tagged for other environments (only) are hidden. */
  environment?: string
  /** Name patterns never visible, to any agent. */
  deny: string[]
  /** Per agent name: name patterns it may see (`allow`) and may not (`deny`). */
  agents: Record<string, { allow: string[]; deny: string[] }>
  phases: Phase[]
}

/** Who asks, and when. `step` undefined: no phase applies. */
export interface Scope {
  agent: string
  step?: number
}

interface CompiledPhase {
  until: number
  tags: Set<string>
  tools: Glob[]
  sideEffects: Set<SideEffect>
}

export class Visibility {
  private readonly environment?: string
  private readonly deny: Glob[]
  private readonly agents: Map<string, { allow: Glob[]; deny: Glob[] }>
  private readonly phases: CompiledPhase[]

  /** `exempt` (the search tool) ignores allow lists and phases: without it nothing else can be found. */
  constructor(
    config: VisibilityConfig,
    private readonly exempt: string,
  ) {
    this.environment = config.environment
    this.deny = config.deny.map(globPattern)
    this.agents = new Map(
      Object.entries(config.agents).map(([agent, lists]) => [
        agent,
        { allow: lists.allow.map(globPattern), deny: lists.deny.map(globPattern) },
      ]),
    )
    this.phases = [...config.phases]
      .sort((a, b) => a.until - b.until)
      .map((p) => ({
        until: p.until,
        tags: new Set(p.tags),
        tools: p.tools.map(globPattern),
        sideEffects: new Set(p.sideEffects),
      }))
  }

  /** The index of the phase in force at `step`, or -1 when none is (no step given, or past the last phase). */
  phaseAt(step: number | undefined): number {
    if (step === undefined) return -1
    return this.phases.findIndex((p) => step <= p.until)
  }

  allows(tool: Tool, scope: Scope): boolean {
    if (this.deny.some((re) => re.test(tool.name))) return false
    if (!this.inEnvironment(tool)) return false
    const lists = this.agents.get(scope.agent)
    if (lists?.deny.some((re) => re.test(tool.name))) return false
    if (tool.name === this.exempt) return true
    if (lists && !lists.allow.some((re) => re.test(tool.name))) return false
    const phase = this.phases[this.phaseAt(scope.step)]
    return !phase || inPhase(tool, phase)
  }

  private inEnvironment(tool: Tool): boolean {
    if (this.environment === undefined) return true
    const envs = (tool.tags ?? []).filter((t) => t.startsWith(EnvironmentTag))
    return envs.length === 0 || envs.includes(EnvironmentTag + this.environment)
  }
}

function inPhase(tool: Tool, phase: CompiledPhase): boolean {
  return (
    phase.sideEffects.has(tool.sideEffect) ||
    (tool.tags ?? []).some((t) => phase.tags.has(t)) ||
    phase.tools.some((re) => re.test(tool.name))
  )
}
