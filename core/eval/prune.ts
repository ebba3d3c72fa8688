/**
 * @module eval/prune
 * Config for another version of a plugin: the keys its schema does not declare are left out (and
 * listed), so the 2.x config of a plugin can be tried on 1.x as far as 1.x understands it. Shared by
 * `cordage eval --plugin` and the playground's compare view.
 */
import type { Schema } from 'cordis'

/** `value` with what `schema` does not declare left out; each key left out is pushed to `dropped` as a path. */
export function prune(schema: Schema | undefined, value: unknown, path: string, dropped: string[]): unknown {
  const s = schema as unknown as { type?: string; dict?: Record<string, Schema>; inner?: Schema; list?: Schema[] } | undefined
  if (!s || value === null || typeof value !== 'object') return value
  // A config schema wrapped in a check (Schema.transform, as policy-rules checks its argument tests):
  // the keys are those of the schema inside; the check itself runs when the side's preset is loaded.
  if (s.type === 'transform' && s.inner) return prune(s.inner, value, path, dropped)
  if (s.type === 'object' && s.dict && !Array.isArray(value)) {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) {
      if (!s.dict[key]) dropped.push(`${path}${path ? '.' : ''}${key}`)
      else out[key] = prune(s.dict[key], v, `${path}${path ? '.' : ''}${key}`, dropped)
    }
    return out
  }
  if (s.type === 'array' && s.inner && Array.isArray(value)) return value.map((v, i) => prune(s.inner, v, `${path}[${i}]`, dropped))
  if (s.type === 'dict' && s.inner && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prune(s.inner, v, `${path}.${k}`, dropped)]))
  }
  return value
}

/** The top-level keys a plugin's config schema declares (through a Schema.transform check, as prune does). */
export function configKeys(schema: Schema | undefined): string[] {
  let s = schema as unknown as { type?: string; dict?: Record<string, Schema>; inner?: Schema } | undefined
  while (s?.type === 'transform' && s.inner) s = s.inner as unknown as typeof s
  return s?.type === 'object' && s.dict ? Object.keys(s.dict) : []
}
