/**
 * @module bench/tool-search/scale
 * A registry of any size from the evaluation registry, for latency at 10,000 tools: copy k of a tool
 * lives in another tenant or region (`github_eu__create_issue`), with the same parameters and a
 * description that says where it acts. Copies are near duplicates of their original on purpose: they
 * make the index ten times larger with terms that really occur, which is what costs time.
 */
import type { RegistryTool } from './catalog/expand.ts'

const Tenants = ['eu', 'us', 'apac', 'staging', 'sandbox', 'legacy', 'acme', 'globex', 'initech', 'umbrella', 'hooli', 'wayne']

/** The first `size` tools of the registry and its copies (the originals first). */
export function scaleRegistry(registry: RegistryTool[], size: number): RegistryTool[] {
  const out = registry.slice(0, size)
  for (let copy = 0; out.length < size; copy++) {
    if (copy >= Tenants.length) throw new Error(`cannot scale ${registry.length} tools to ${size}`)
    const tenant = Tenants[copy]
    for (const tool of registry) {
      if (out.length >= size) break
      const [ns, local] = tool.name.split('__')
      out.push({ ...tool, name: `${ns}_${tenant}__${local}`, description: `${tool.description} Acts on the ${tenant} account.` })
    }
  }
  return out
}

/** The original a copy was made from: `github_eu__create_issue` → `github__create_issue`. */
export function originalOf(name: string): string {
  const [ns, local] = name.split('__')
  const base = ns
    .split('_')
    .filter((part) => !Tenants.includes(part))
    .join('_')
  return `${base}__${local}`
}
