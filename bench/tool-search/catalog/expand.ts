/**
 * @module bench/tool-search/catalog/expand
 * Turns a namespace spec into registry entries: each resource operation becomes a tool with a
 * description from one of several phrasings (picked by a hash of the tool name, so the output is
 * deterministic but not uniform), and a JSON Schema built from its parameters.
 */
import type { Effect, NamespaceSpec, Op, Params, ResourceSpec, ToolSpec } from './spec.ts'

/** One tool of the evaluation registry, as written to registry.json. */
export interface RegistryTool {
  name: string
  description: string
  tags: string[]
  sideEffect: Effect
  inputSchema: Record<string, unknown>
}

/** FNV-1a: a stable choice among phrasings, the same on every machine and every run. */
export function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

const pick = <T>(key: string, options: T[]): T => options[hash(key) % options.length]

export function expandNamespace(spec: NamespaceSpec): RegistryTool[] {
  const tools: RegistryTool[] = []
  for (const r of spec.resources) for (const op of r.ops) tools.push(resourceTool(spec, r, op))
  for (const t of spec.tools) tools.push(handWritten(spec, t))
  return tools
}

function resourceTool(spec: NamespaceSpec, r: ResourceSpec, op: Op): RegistryTool {
  const plural = r.plural ?? `${r.name}s`
  const name = `${spec.ns}__${op === 'list' || op === 'search' ? `${op}_${plural}` : `${op}_${r.name}`}`
  const label = r.label ?? r.name.replace(/_/g, ' ')
  const labels = r.label && !r.plural ? `${r.label}s` : plural.replace(/_/g, ' ')
  const a = /^[aeiou]/i.test(label) ? 'an' : 'a'
  const parentLabel = r.parent
    ? Object.values(r.parent)
        .map((p) => p.description.replace(/\.$/, '').toLowerCase())
        .join(', ')
    : ''
  const within = r.parent
    ? pick(`${name}/in`, [` in a ${spec.product} ${parentKey(r)}`, ` (${parentLabel})`, ` of a ${parentKey(r)}`])
    : ` in ${spec.product}`
  const fieldNames = Object.entries(r.fields ?? {})
    .filter(([, p]) => p.type !== 'boolean')
    .map(([k]) => bare(k))
    .slice(0, 3)
    .map((f) => f.replace(/_/g, ' '))
  const filterNames = Object.keys(r.filters ?? {})
    .map(bare)
    .slice(0, 3)
    .map((f) => f.replace(/_/g, ' '))
  const by = filterNames.length ? `, filtered by ${joinWords(filterNames)}` : ''
  const about = r.about ? ` ${r.about}` : ''
  const phrasings: Record<Op, string[]> = {
    list: [`List ${labels}${within}${by}.`, `Return ${labels}${within}, a page at a time${by}.`, `List the ${labels}${within}.${about}`],
    get: [
      `Get one ${label}${within} by its ID.${about}`,
      `Fetch the details of ${a} ${label}.`,
      `Retrieve a single ${spec.product} ${label}, with all of its fields.`,
    ],
    create: [
      `Create ${a} ${label}${within}.${about}`,
      `Create a new ${spec.product} ${label}${fieldNames.length ? ` with ${joinWords(fieldNames)}` : ''}.`,
      `Add ${a} ${label}${within}.`,
    ],
    update: [
      `Update ${a} ${label}: change its ${joinWords(fieldNames.length ? fieldNames : ['fields'])}.`,
      `Edit an existing ${spec.product} ${label}.`,
      `Modify the fields of ${a} ${label}${within}.`,
    ],
    delete: [
      `Delete ${a} ${label}${within}. This cannot be undone.`,
      `Permanently remove a ${spec.product} ${label}.`,
      `Delete ${a} ${label} by its ID.`,
    ],
    search: [
      `Search ${labels}${within} by a text query${by}.`,
      `Full-text search over ${spec.product} ${labels}.`,
      `Find ${labels} matching a query${by}.`,
    ],
  }
  const params: Params = { ...r.parent, ...(op === 'list' || op === 'search' || op === 'create' ? {} : r.id) }
  if (op === 'search') params['query!'] = { type: 'string', description: `Text to look for in ${labels}.` }
  if (op === 'list' || op === 'search') Object.assign(params, r.filters, paging)
  if (op === 'create') Object.assign(params, r.fields)
  if (op === 'update') Object.assign(params, optional(r.fields ?? {}))
  const read = op === 'list' || op === 'get' || op === 'search'
  return {
    name,
    description: pick(name, phrasings[op]),
    tags: [...spec.tags, read ? 'read' : 'write', ...(op === 'delete' ? ['destructive'] : [])],
    sideEffect: read ? 'none' : spec.writes,
    inputSchema: schemaOf(params),
  }
}

function handWritten(spec: NamespaceSpec, t: ToolSpec): RegistryTool {
  const sideEffect = t.sideEffect ?? spec.writes
  return {
    name: `${spec.ns}__${t.name}`,
    description: t.description,
    tags: [...spec.tags, sideEffect === 'none' ? 'read' : 'write', ...(t.tags ?? [])],
    sideEffect,
    inputSchema: schemaOf(t.params),
  }
}

const paging: Params = {
  limit: { type: 'integer', description: 'Most items to return (default 30, at most 100).' },
  cursor: { type: 'string', description: 'Cursor from the previous page.' },
}

const bare = (key: string) => key.replace(/!$/, '')
const optional = (params: Params): Params => Object.fromEntries(Object.entries(params).map(([k, v]) => [bare(k), v]))
const parentKey = (r: ResourceSpec) =>
  bare(Object.keys(r.parent!).at(-1)!)
    .replace(/_(id|name|key)$/, '')
    .replace(/_/g, ' ')

function joinWords(list: string[]): string {
  return list.length <= 1 ? list.join('') : `${list.slice(0, -1).join(', ')} and ${list.at(-1)}`
}

/** JSON Schema of an object with these parameters; a key ending in `!` is required. */
export function schemaOf(params: Params): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const [key, param] of Object.entries(params)) {
    const name = bare(key)
    if (key.endsWith('!')) required.push(name)
    properties[name] = param
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }
}
