/**
 * @module host/layers
 * Layered presets: a preset file may name a base (`extends: base.yml`, relative to itself), which may
 * name its own, and `--set key=value` overrides come last. The layers are merged into one plain value
 * before it is checked, and every key of the result remembers which layer (and which key path in that
 * layer) it came from, so a problem is reported where it can be fixed. Files are only ever read.
 *
 * Merge rules (docs/reference/presets.md "Layers"):
 * - maps are merged key by key, deeply; a scalar or a list replaces what the base had;
 * - `agents` are merged by name;
 * - an agent's `plugins` are matched by plugin name (or folder, for `path` entries): a matching entry
 *   replaces `version` and `onDrift` when it gives them and deep-merges `config`; `remove: true` drops
 *   the base's entry; an entry for a new plugin is appended. `model` merges the same way when it names
 *   the same plugin, and is replaced when it names another.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { isAlias, isMap as isYamlMap, isSeq, LineCounter, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml'
import { CordageError } from '../contracts/errors.ts'
import { closest } from '../kit/closest.ts'

type Key = string | number

/** One preset file of a chain. */
export interface FileLayer {
  kind: 'file'
  file: string
  /** As shown in messages: relative to the working directory. */
  shown: string
  dir: string
  doc: Document
  lines: LineCounter
  raw: unknown
}

/** One `--set key=value`. */
export interface SetLayer {
  kind: 'set'
  text: string
}

export type Layer = FileLayer | SetLayer

/** Where a key of the merged preset came from: the layer, and the key path inside that layer. */
export interface Origin {
  layer: Layer
  path: Key[]
}

export interface Merged {
  /** The merged preset, `extends` removed, before it is checked. */
  raw: unknown
  /** The file layers, base first; the last is the file that was named. */
  files: FileLayer[]
  sets: SetLayer[]
  /** Where the value at a merged key path came from; for a path that does not exist, its deepest existing part. */
  origin(path: readonly Key[]): { origin?: Origin; exact: boolean }
}

const origins = new WeakMap<object, Map<Key, Origin>>()

/** Read `file`, its chain of bases, and the `--set` overrides, and merge them. */
export function readLayers(file: string, sets: readonly string[] = []): Merged {
  const files = readChain(resolve(file))
  // A single file that is not a map is left as it is, for the shape check to describe.
  let merged: unknown = files[0].raw
  if (files.length > 1 || isMap(files[0].raw)) {
    let acc: Record<string, unknown> = track({}, new Map())
    for (const layer of files) {
      if (!isMap(layer.raw))
        throw new CordageError(
          'preset_invalid',
          `preset ${layer.shown} is part of a layered preset but is not a map of keys (found ${describe(layer.raw)})`,
        )
      absolutePaths(layer)
      acc = mergeMap(acc, layer.raw, layer, [], 'top')
    }
    merged = acc
  }
  const setLayers = sets.map((text) => ({ kind: 'set', text }) as SetLayer)
  for (const layer of setLayers) merged = applySet(merged, layer)
  return { raw: merged, files, sets: setLayers, origin: (path) => originOf(merged, path) }
}

/** `file:line:col` of an origin (or `--set TEXT`); `exact` false points at the deepest existing part. */
export function placeOf(origin: Origin): string {
  const { layer } = origin
  if (layer.kind === 'set') return `--set ${layer.text}`
  const at = (offset: number | undefined) => {
    if (offset === undefined) return layer.shown
    const { line, col } = layer.lines.linePos(offset)
    return `${layer.shown}:${line}:${col}`
  }
  for (let n = origin.path.length; n > 0; n--) {
    const offset = offsetOf(layer.doc, origin.path.slice(0, n))
    if (offset !== undefined) return at(offset)
  }
  return layer.shown
}

/** Offset of a key path's key in a YAML document (or of its value when it has no key). */
export function offsetOf(doc: Document, path: Key[]): number | undefined {
  if (path.length === 0) return undefined
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true)
  const items = (parent as { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | undefined)?.items
  const last = path[path.length - 1]
  const pair = typeof last === 'string' ? items?.find((item) => item.key?.value === last) : undefined
  return pair?.key?.range?.[0] ?? (doc.getIn(path, true) as { range?: number[] } | undefined)?.range?.[0]
}

function readChain(first: string): FileLayer[] {
  const chain: FileLayer[] = []
  let current = first
  let from: { layer: FileLayer; text: string } | undefined
  for (;;) {
    const shown = relative(process.cwd(), current) || current
    if (chain.some((l) => l.file === current)) {
      const cycle = [...chain.map((l) => l.shown), shown].join(' → ')
      throw new CordageError(
        'preset_invalid',
        `${placeOf({ layer: from!.layer, path: ['extends'] })} extends: the presets extend each other in a cycle: ${cycle}`,
      )
    }
    if (!existsSync(current)) {
      if (!from) throw new CordageError('preset_not_found', `preset file ${shown} does not exist`)
      throw new CordageError(
        'preset_not_found',
        `${placeOf({ layer: from.layer, path: ['extends'] })} extends: the base preset ${JSON.stringify(from.text)} (${shown}) does not exist`,
      )
    }
    if (from && statSync(current).isDirectory()) {
      throw new CordageError(
        'preset_not_found',
        `${placeOf({ layer: from.layer, path: ['extends'] })} extends: the base preset ${JSON.stringify(from.text)} (${shown}) is a folder; name a preset file`,
      )
    }
    const layer = readFile(current, shown)
    chain.push(layer)
    const base = isMap(layer.raw) ? layer.raw.extends : undefined
    if (base === undefined) break
    if (typeof base !== 'string' || !base.trim()) {
      throw new CordageError(
        'preset_invalid',
        `${placeOf({ layer, path: ['extends'] })} extends: expected the file name of a base preset (relative to this file), found ${describe(base)}`,
      )
    }
    from = { layer, text: base }
    current = resolve(layer.dir, base)
  }
  return chain.reverse()
}

/** A preset is written by hand: far below this. A larger file is refused before it is read. */
export const MaxPresetBytes = 8 * 1024 * 1024

/**
 * How far YAML aliases may expand (the yaml package's `maxAliasCount`): enough to share a rules list
 * between agents, far too little for an alias bomb ("billion laughs").
 */
export const MaxAliasCount = 100

function readFile(file: string, shown: string): FileLayer {
  const text = readText(file, shown)
  const lines = new LineCounter()
  const where = (offset: number | undefined) => {
    if (offset === undefined) return shown
    const { line, col } = lines.linePos(offset)
    return `${shown}:${line}:${col}`
  }
  let doc: Document
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true })
  } catch (error) {
    throw new CordageError('preset_invalid', `preset ${shown} is not valid YAML: ${firstLine(error)}`, { cause: error })
  }
  if (doc.errors.length) {
    const problems = doc.errors.map((e) => `${where(e.pos[0])} ${e.message.split('\n')[0]}`)
    throw new CordageError('preset_invalid', `preset ${shown} is not valid YAML:\n  ${problems.join('\n  ')}`, { data: problems })
  }
  if (doc.contents === null || doc.contents === undefined) {
    throw new CordageError(
      'preset_invalid',
      `preset ${shown} is empty; a preset is a map whose "agents" key lists the agents (see docs/reference/presets.md)`,
    )
  }
  if (!isYamlMap(doc.contents)) {
    const what = isSeq(doc.contents) ? 'a list' : isAlias(doc.contents) ? 'an alias' : `a single value (${describe(doc.contents.toJSON())})`
    throw new CordageError(
      'preset_invalid',
      `preset ${where(doc.contents.range?.[0])} (top level): expected a map of keys (cordage, extends, agents), found ${what}; a preset starts with "agents:" (see docs/reference/presets.md)`,
    )
  }
  const aliasProblems = checkAliases(doc, where)
  if (aliasProblems.length) {
    throw new CordageError(
      'preset_invalid',
      `preset ${shown} has ${aliasProblems.length} problem(s) with YAML aliases:\n  ${aliasProblems.join('\n  ')}`,
      { data: aliasProblems },
    )
  }
  let raw: unknown
  try {
    raw = doc.toJS({ maxAliasCount: MaxAliasCount })
  } catch (error) {
    const message = firstLine(error)
    const bomb = /excessive alias count/i.test(message)
    let first: number | undefined
    visit(doc, {
      Alias(_key, node) {
        first = node.range?.[0]
        return visit.BREAK
      },
    })
    throw new CordageError(
      'preset_invalid',
      bomb
        ? `preset ${where(first)} uses YAML aliases that expand too far (more than ${MaxAliasCount} copies of an anchor's contents, counting nested aliases): write the values out, or share them through extends (docs/reference/presets.md#layers)`
        : `preset ${shown} cannot be read as data: ${message}`,
      { cause: error },
    )
  }
  return { kind: 'file', file, shown, dir: dirname(file), doc, lines, raw }
}

/**
 * The file's text: a file (not a folder), readable, not too large, UTF-8 text without NUL bytes.
 * @throws CordageError `preset_not_found` for a folder, `preset_invalid` for the rest, naming the file
 */
function readText(file: string, shown: string): string {
  let size: number
  try {
    const stat = statSync(file)
    if (stat.isDirectory()) {
      let inside: string[] = []
      try {
        inside = readdirSync(file)
          .filter((f) => /\.ya?ml$/i.test(f))
          .sort()
      } catch {
        /* listed only as a hint */
      }
      const hint = inside.length
        ? `; it holds ${inside
            .slice(0, 5)
            .map((f) => join(shown, f))
            .join(', ')}${inside.length > 5 ? ', ...' : ''}`
        : ''
      throw new CordageError('preset_not_found', `preset ${shown} is a folder, not a preset file: pass the YAML file itself${hint}`)
    }
    if (!stat.isFile())
      throw new CordageError('preset_invalid', `preset ${shown} is not a regular file (a device, socket or pipe); pass a YAML file`)
    size = stat.size
  } catch (error) {
    if (CordageError.is(error)) throw error
    throw new CordageError('preset_not_found', `preset ${shown} cannot be opened (${firstLine(error)})`, { cause: error })
  }
  if (size > MaxPresetBytes)
    throw new CordageError(
      'preset_invalid',
      `preset ${shown} is ${(size / 1024 / 1024).toFixed(1)} MB; a preset is at most ${MaxPresetBytes / 1024 / 1024} MB (is it the file you meant?)`,
    )
  let bytes: Buffer
  try {
    bytes = readFileSync(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code
    const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied: make it readable for this user' : firstLine(error)
    throw new CordageError('preset_invalid', `preset ${shown} cannot be read (${why})`, { cause: error })
  }
  const nul = bytes.indexOf(0)
  let text: string
  try {
    if (nul >= 0) throw new Error(`a NUL byte at offset ${nul}`)
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    throw new CordageError(
      'preset_invalid',
      `preset ${shown} is not a text file (${nul >= 0 ? `it has a NUL byte at offset ${nul}` : 'it is not UTF-8'}); a preset is a YAML file (see docs/reference/presets.md)`,
      { cause: error },
    )
  }
  return text
}

/**
 * Aliases (`*name`) must name an anchor (`&name`) set before them, and must not sit inside the node
 * they name (a value that contains itself has no end). Each problem names the alias's line.
 */
function checkAliases(doc: Document, where: (offset: number | undefined) => string): string[] {
  const problems: string[] = []
  visit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc)
      if (!target) {
        problems.push(
          `${where(node.range?.[0])} alias *${node.source} names no anchor: write &${node.source} on a value before it, or write the value out`,
        )
      } else if ((path as readonly unknown[]).includes(target)) {
        problems.push(
          `${where(node.range?.[0])} alias *${node.source} is inside the value it names (&${node.source} at ${where((target as YamlNode).range?.[0]).split(' ')[0]}): a value cannot contain itself`,
        )
      }
      return undefined
    },
  })
  return problems
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}

/** A plugin folder named by `path` is relative to the file that names it, whichever layer that is. */
function absolutePaths(layer: FileLayer) {
  const agents = (layer.raw as Record<string, unknown>).agents
  if (!isMap(agents)) return
  for (const agent of Object.values(agents)) {
    if (!isMap(agent)) continue
    const entries = [agent.model, ...(Array.isArray(agent.plugins) ? agent.plugins : [])]
    for (const entry of entries)
      if (isMap(entry) && typeof entry.path === 'string' && entry.path) entry.path = resolve(layer.dir, entry.path)
  }
}

type Where = 'top' | 'agents' | 'agent' | 'plain'

function mergeMap(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
  layer: Layer,
  path: Key[],
  where: Where,
): Record<string, unknown> {
  const out = track({ ...base }, new Map(origins.get(base)))
  const marks = origins.get(out)!
  for (const [key, value] of Object.entries(over)) {
    if (where === 'top' && key === 'extends') continue
    if (Forbidden.has(key)) throw forbiddenKey(layer, [...path, key])
    const here = [...path, key]
    const old = out[key]
    const inner: Where = where === 'top' && key === 'agents' ? 'agents' : where === 'agents' ? 'agent' : 'plain'
    if (where === 'agent' && key === 'plugins' && Array.isArray(value)) {
      out[key] = mergePlugins(Array.isArray(old) ? old : [], value, layer, here)
    } else if (where === 'agent' && key === 'model') {
      out[key] = old === undefined ? adopt(value, layer, here) : mergeEntry(old, value, layer, here, marks.get(key))
    } else if (isMap(value) && (isMap(old) || inner !== 'plain')) {
      out[key] = mergeMap(isMap(old) ? old : {}, value, layer, here, inner)
    } else {
      out[key] = adopt(value, layer, here)
    }
    marks.set(key, { layer, path: here })
  }
  return out
}

/** The plugin an entry names: its name, or `path:` and its folder. */
function identity(entry: unknown): string | undefined {
  if (typeof entry === 'string') {
    const at = entry.lastIndexOf('@')
    return at > 0 ? entry.slice(0, at) : entry
  }
  if (!isMap(entry)) return undefined
  if (typeof entry.plugin === 'string') return entry.plugin
  if (typeof entry.path === 'string') return `path:${entry.path}`
  return undefined
}

/** The object form of an entry, keeping where each key came from. */
function asObject(entry: unknown, origin: Origin): Record<string, unknown> {
  if (isMap(entry)) return entry
  const text = String(entry)
  const at = text.lastIndexOf('@')
  const out: Record<string, unknown> = at > 0 ? { plugin: text.slice(0, at), version: text.slice(at + 1) } : { plugin: text }
  return track(out, new Map(Object.keys(out).map((k) => [k, origin])))
}

function mergePlugins(base: unknown[], over: unknown[], layer: Layer, path: Key[]): unknown[] {
  const baseMarks = origins.get(base)
  // Only entries of earlier layers are matched: the same plugin twice in one layer stays twice, for
  // the resolver to refuse (plugin_conflict), as it would in a single file.
  const items: { value: unknown; origin: Origin; earlier: boolean }[] = base.map((value, i) => ({
    value,
    origin: baseMarks?.get(i) ?? { layer, path: [...path, i] },
    earlier: true,
  }))
  over.forEach((entry, i) => {
    const here = [...path, i]
    const id = identity(entry)
    const index = id === undefined ? -1 : items.findIndex((item) => item.earlier && identity(item.value) === id)
    if (isMap(entry) && entry.remove !== undefined) {
      if (entry.remove !== true)
        throw layerError(
          { layer, path: [...here, 'remove'] },
          here,
          `"remove" takes true (drop the plugin a base layer lists), found ${describe(entry.remove)}`,
        )
      if (index < 0)
        throw layerError(
          { layer, path: here },
          here,
          `removes plugin ${JSON.stringify(id ?? entry)}, which no earlier layer of this agent lists`,
        )
      items.splice(index, 1)
      return
    }
    if (index < 0) items.push({ value: adopt(entry, layer, here), origin: { layer, path: here }, earlier: false })
    else
      items[index] = {
        value: mergeEntry(items[index].value, entry, layer, here, items[index].origin),
        origin: { layer, path: here },
        earlier: false,
      }
  })
  return track(
    items.map((item) => item.value),
    new Map(items.map((item, i) => [i, item.origin])),
  )
}

/** Merge an override entry into a base entry: same plugin → version and onDrift replaced, config deep-merged. */
function mergeEntry(base: unknown, over: unknown, layer: Layer, path: Key[], baseOrigin?: Origin): unknown {
  if (identity(base) === undefined || identity(base) !== identity(over)) return adopt(over, layer, path)
  const from = asObject(base, baseOrigin ?? { layer, path })
  const to = asObject(adopt(over, layer, path), { layer, path })
  const config = isMap(from.config) && isMap(to.config) ? mergeMap(from.config, to.config, layer, [...path, 'config'], 'plain') : undefined
  const out = track({ ...from, ...to }, new Map([...(origins.get(from) ?? []), ...(origins.get(to) ?? [])]))
  if (config) out.config = config
  return out
}

/** A deep copy of a layer's value whose every key remembers that layer. */
/** Keys that would reach an object's prototype: never a preset key, in a file or a --set. */
const Forbidden = new Set(['__proto__', 'constructor', 'prototype'])

function adopt(value: unknown, layer: Layer, path: Key[]): unknown {
  if (Array.isArray(value))
    return track(
      value.map((v, i) => adopt(v, layer, [...path, i])),
      new Map(value.map((_, i) => [i, { layer, path: [...path, i] }])),
    )
  if (isMap(value)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (Forbidden.has(k)) throw forbiddenKey(layer, [...path, k])
      out[k] = adopt(v, layer, [...path, k])
    }
    return track(out, new Map(Object.keys(value).map((k) => [k, { layer, path: [...path, k] }])))
  }
  return value
}

function forbiddenKey(layer: Layer, path: Key[]): CordageError {
  const key = String(path[path.length - 1])
  return new CordageError(
    'preset_invalid',
    `${placeOf({ layer, path })} ${shownPath(path)}: "${key}" is not a preset key (it would reach JavaScript's object prototype); rename or remove it`,
  )
}

function track<T extends object>(value: T, marks: Map<Key, Origin>): T {
  origins.set(value, marks)
  return value
}

/** `agents.support.budgets.maxSteps=4`; `plugins.NAME` or `plugins[N]` picks an entry. The value is YAML (so JSON too). */
function applySet(merged: unknown, layer: SetLayer): unknown {
  const eq = layer.text.indexOf('=')
  if (eq <= 0)
    throw new CordageError('preset_invalid', `--set ${layer.text}: expected KEY=VALUE, such as agents.support.budgets.maxSteps=4`)
  const key = layer.text.slice(0, eq)
  const value = setValue(layer, eq)
  const segments = splitKey(key)
  if (!segments.length || segments.some((s) => s === ''))
    throw new CordageError('preset_invalid', `--set ${layer.text}: "${key}" is not a key path such as agents.support.budgets.maxSteps`)
  const forbidden = segments.find((s) => Forbidden.has(String(s)))
  if (forbidden !== undefined)
    throw new CordageError(
      'preset_invalid',
      `--set ${layer.text}: "${forbidden}" is not a preset key (it would reach JavaScript's object prototype); rename or remove it`,
    )
  if (!isMap(merged)) throw new CordageError('preset_invalid', `--set ${layer.text}: the preset is not a map of keys`)
  let node: Record<string, unknown> | unknown[] = merged
  const walked: Key[] = []
  for (let i = 0; i < segments.length; i++) {
    const last = i === segments.length - 1
    let segment: Key = segments[i]
    if (Array.isArray(node)) {
      segment = pickEntry(node, String(segment), layer, walked)
    }
    if (!origins.has(node)) origins.set(node, new Map())
    const marks = origins.get(node)!
    const container = node as Record<Key, unknown>
    walked.push(segment)
    if (last) {
      container[segment] = adopt(value, layer, [])
      marks.set(segment, { layer, path: [] })
      break
    }
    let next = container[segment]
    if (next === undefined) {
      next = track({}, new Map())
      container[segment] = next
      marks.set(segment, { layer, path: [] })
    } else if (
      typeof next === 'string' &&
      walked.length >= 3 &&
      walked[0] === 'agents' &&
      (walked[2] === 'model' || walked[2] === 'plugins')
    ) {
      // `store-sqlite@^1.0.0` becomes `{ plugin, version }` so a key inside it can be set.
      next = asObject(next, marks.get(segment) ?? { layer, path: [] })
      container[segment] = next
    } else if (next === null || typeof next !== 'object') {
      throw new CordageError(
        'preset_invalid',
        `--set ${layer.text}: ${shownPath(walked)} is ${describe(next)}, not a map, so it has no key "${segments[i + 1]}"`,
      )
    }
    node = next as Record<string, unknown>
  }
  return merged
}

/** The value of `--set KEY=VALUE` (after the `=` at `eq`), read as YAML (so JSON too); aliases refused. */
function setValue(layer: SetLayer, eq: number): unknown {
  try {
    const doc = parseDocument(layer.text.slice(eq + 1), { prettyErrors: false, uniqueKeys: true })
    if (doc.errors.length) throw doc.errors[0]
    let alias: string | undefined
    visit(doc, {
      Alias(_key, node) {
        alias ??= node.source
        return visit.BREAK
      },
    })
    if (alias !== undefined)
      throw new CordageError(
        'preset_invalid',
        `--set ${layer.text}: the value uses the YAML alias *${alias}; a --set value cannot use aliases (write the value out)`,
      )
    return doc.toJS({ maxAliasCount: 0 })
  } catch (error) {
    if (CordageError.is(error)) throw error
    throw new CordageError('preset_invalid', `--set ${layer.text}: the value is not valid YAML or JSON: ${firstLine(error)}`, {
      cause: error,
    })
  }
}

/**
 * The index of the list entry a `--set` segment names: an index (`4`), a plugin name (`policy-rules`),
 * or for a `path` entry the name of its folder (`greeter` for `path: ../acme/greeter`), the last part
 * of the path. A name two entries answer to is refused: the index says which.
 */
function pickEntry(list: unknown[], segment: string, layer: SetLayer, walked: readonly Key[]): number {
  const label = (entry: unknown) => {
    const id = identity(entry)
    return id?.startsWith('path:') ? `${basename(id.slice(5))} (path ${id.slice(5)})` : id
  }
  if (/^\d+$/.test(segment)) {
    const index = Number(segment)
    if (index < list.length) return index
    throw new CordageError(
      'preset_invalid',
      `--set ${layer.text}: ${shownPath(walked)} has no entry [${index}]; it has ${list.length} (${list.map((e, i) => `[${i}] ${label(e) ?? '?'}`).join(', ') || 'none'})`,
    )
  }
  const matches: number[] = []
  list.forEach((entry, i) => {
    const id = identity(entry)
    if (id === segment || (id?.startsWith('path:') && basename(id.slice(5)) === segment)) matches.push(i)
  })
  if (matches.length === 1) return matches[0]
  if (matches.length > 1) {
    throw new CordageError(
      'preset_invalid',
      `--set ${layer.text}: ${shownPath(walked)} has ${matches.length} entries named ${JSON.stringify(segment)}: ${matches.map((i) => `[${i}] ${label(list[i])}`).join(', ')}; pick one by index, such as ${shownPath([...walked, matches[matches.length - 1]])}`,
    )
  }
  const names = list.map(label).filter(Boolean).join(', ')
  const known = list
    .map(identity)
    .filter((id): id is string => !!id)
    .map((id) => (id.startsWith('path:') ? basename(id.slice(5)) : id))
  const hint = closest(segment, known)
  throw new CordageError(
    'preset_invalid',
    `--set ${layer.text}: ${shownPath(walked)} has no entry ${JSON.stringify(segment)}; it has ${names || 'none'} (by plugin name, by the folder name of a path entry, or by index)${hint ? `; did you mean "${hint}"?` : ''}`,
  )
}

function splitKey(key: string): Key[] {
  const out: Key[] = []
  for (const part of key.split('.')) {
    const match = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (!match) {
      out.push(part)
      continue
    }
    if (match[1] || !match[2]) out.push(match[1])
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) out.push(index[1])
  }
  return out
}

function originOf(merged: unknown, path: readonly Key[]): { origin?: Origin; exact: boolean } {
  let node = merged
  let origin: Origin | undefined
  for (let i = 0; i < path.length; i++) {
    if (node === null || typeof node !== 'object')
      return { origin: origin && { ...origin, path: [...origin.path, ...path.slice(i)] }, exact: false }
    const mark = origins.get(node)?.get(path[i])
    if (!(path[i] in (node as object))) return { origin, exact: false }
    if (mark) origin = mark
    else if (origin) origin = { ...origin, path: [...origin.path, path[i]] }
    node = (node as Record<Key, unknown>)[path[i]]
  }
  return { origin, exact: true }
}

function layerError(origin: Origin, path: Key[], message: string): CordageError {
  return new CordageError('preset_invalid', `${placeOf(origin)} ${shownPath(path)}: ${message}`)
}

function shownPath(path: readonly Key[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(top level)'
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value)
  return text.length > 60 ? text.slice(0, 57) + '...' : text
}
