/**
 * @module parallel
 * Which calls of one step may run side by side. A call's footprint (Tool.footprint) names what it
 * reads and writes; two calls conflict when one writes something the other reads or writes. The
 * calls are cut, in proposal order, into waves of calls that do not conflict: a wave runs together,
 * the next wave starts when it is over. Order within the record does not depend on this: outcomes
 * are recorded in proposal order whatever finishes first (core/kernel/effects.ts).
 */
import type { Footprint, Tool } from '../contracts/services/tools.ts'

/** Everything: the footprint of a read-only tool that does not declare one. */
const All = '*'

/** Whether the tool may share a wave at all: reads always; writes only when they say what they write. */
export function mayRunBeside(tool: Tool): boolean {
  return tool.sideEffect === 'none' || typeof tool.footprint === 'function'
}

/** What a call touches; a footprint that throws or says nothing counts as touching everything it could. */
export function footprintOf(tool: Tool, args: unknown): Required<Footprint> {
  let declared: Footprint | undefined
  try {
    declared = tool.footprint?.(args)
  } catch {}
  const reads = Array.isArray(declared?.reads) ? declared.reads : undefined
  const writes = Array.isArray(declared?.writes) ? declared.writes : undefined
  if (tool.sideEffect === 'none') return { reads: reads ?? [All], writes: [] }
  return { reads: reads ?? [], writes: writes ?? [All] }
}

function overlaps(a: string, b: string): boolean {
  return a === All || b === All || a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`)
}

function touches(names: string[], others: string[]): boolean {
  return names.some((a) => others.some((b) => overlaps(a, b)))
}

export function conflict(a: Required<Footprint>, b: Required<Footprint>): boolean {
  return touches(a.writes, [...b.reads, ...b.writes]) || touches(b.writes, a.reads)
}

/** Cut calls, in order, into waves whose members do not conflict with each other. */
export function waves<T>(calls: T[], footprint: (call: T) => Required<Footprint>): T[][] {
  const out: T[][] = []
  let wave: { call: T; print: Required<Footprint> }[] = []
  for (const call of calls) {
    const print = footprint(call)
    if (wave.some((w) => conflict(w.print, print))) {
      out.push(wave.map((w) => w.call))
      wave = []
    }
    wave.push({ call, print })
  }
  if (wave.length) out.push(wave.map((w) => w.call))
  return out
}
