/**
 * @module bench/tool-search/catalog/spec
 * The shape of the hand-written catalogue the evaluation registry is generated from: per namespace,
 * resources with the usual operations (list, get, create, ...) and hand-written tools that do not
 * follow that pattern. Parameters are written compactly: a key ending in `!` is required.
 */

export type Effect = 'none' | 'local' | 'external'
export type Op = 'list' | 'get' | 'create' | 'update' | 'delete' | 'search'

export interface Param {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object'
  description: string
  enum?: string[]
  items?: { type: string }
}

export type Params = Record<string, Param>

export interface ResourceSpec {
  /** Singular, snake_case: `pull_request`. */
  name: string
  /** Plural for tool names and text; `name + s` when unset. */
  plural?: string
  /** How people write it in prose; `name` with spaces when unset. */
  label?: string
  ops: Op[]
  /** Parameters that identify one item (get, update, delete). */
  id: Params
  /** Parameters naming where the items live (a repository, a channel); on every operation. */
  parent?: Params
  /** Fields set by create and update. */
  fields?: Params
  /** Filters of list and search. */
  filters?: Params
  /** A sentence about what the resource is, added to some descriptions. */
  about?: string
}

export interface ToolSpec {
  name: string
  description: string
  params: Params
  sideEffect?: Effect
  tags?: string[]
}

export interface NamespaceSpec {
  ns: string
  product: string
  tags: string[]
  /** Side effect of writes in this namespace: `external` for services, `local` for the machine. */
  writes: Effect
  resources: ResourceSpec[]
  tools: ToolSpec[]
}

const p =
  (type: Param['type']) =>
  (description: string, extra: Partial<Param> = {}): Param => ({ type, description, ...extra })
export const str = p('string')
export const int = p('integer')
export const num = p('number')
export const bool = p('boolean')
export const obj = p('object')
export const list = (description: string, itemType = 'string'): Param => ({ type: 'array', description, items: { type: itemType } })
export const oneOf = (values: string[], description: string): Param => ({ type: 'string', description, enum: values })
