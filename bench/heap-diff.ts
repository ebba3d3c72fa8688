/**
 * What grew between two V8 heap snapshots, by kind of object: the node type and name V8 gives each
 * object (a constructor's name for JavaScript objects; `code`, `(code deopt data)` and the like for
 * what the JIT keeps). Used by bench/reload.ts `--snapshots` to tell a leak of Cordage's own objects
 * from code the JIT compiled.
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
  nodes: number[]
  strings: string[]
}

/** Count and bytes (self size) of each kind of object in a snapshot file. */
export function kinds(file: string): Map<string, { count: number; bytes: number }> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  const fields = s.snapshot.meta.node_fields
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f))
  const types = s.snapshot.meta.node_types[0]
  const out = new Map<string, { count: number; bytes: number }>()
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const key = `${types[s.nodes[i + type!]!]}: ${s.strings[s.nodes[i + name!]!]!.slice(0, 60)}`
    const k = out.get(key) ?? { count: 0, bytes: 0 }
    k.count++
    k.bytes += s.nodes[i + size!]!
    out.set(key, k)
  }
  return out
}

/** The kinds that grew most in bytes from `before` to `after`. */
export function growth(before: string, after: string, top = 12): { kind: string; count: number; bytes: number }[] {
  const a = kinds(before)
  return [...kinds(after)]
    .map(([kind, b]) => ({ kind, count: b.count - (a.get(kind)?.count ?? 0), bytes: b.bytes - (a.get(kind)?.bytes ?? 0) }))
    .filter((g) => g.bytes > 0)
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, top)
}
