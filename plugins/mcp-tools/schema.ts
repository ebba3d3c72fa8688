/**
 * The argument check of an MCP tool, derived from the JSON Schema the server publishes, so that bad
 * arguments are refused (`invalid_arguments`, fed back to the model) before policy sees them and
 * before the server is called. zod converts most schemas; for the rest (`if`/`then`, `not`, external
 * `$ref`s…) the check degrades one property at a time, and what zod cannot check is left to the server.
 * The model always sees the server's schema as published.
 */
import { z } from 'zod'
import type { ArgSchema } from 'cordage'

export interface ArgumentCheck {
  schema: ArgSchema<Record<string, unknown>>
  /** Set when the schema could not be converted whole: why, for a warning. */
  degraded?: string
}

type JsonObject = Record<string, unknown>

export function argumentCheck(inputSchema: JsonObject): ArgumentCheck {
  const source = withDefs(inputSchema)
  try {
    return { schema: objectArguments(z.fromJSONSchema(source as never)) }
  } catch (error) {
    return { schema: objectArguments(propertyByProperty(source)), degraded: (error as Error).message }
  }
}

/** MCP sends `arguments` as an object; a call without arguments is an empty one. */
function objectArguments(schema: z.ZodType): ArgSchema<Record<string, unknown>> {
  return z.preprocess((value) => value ?? {}, schema) as unknown as ArgSchema<Record<string, unknown>>
}

/** Each property converted on its own; one that cannot be is only checked for presence when required. */
function propertyByProperty(source: JsonObject): z.ZodType {
  const properties = isObject(source.properties) ? source.properties : {}
  const required = new Set(Array.isArray(source.required) ? source.required : [])
  const shape: Record<string, z.ZodType> = {}
  for (const [key, property] of Object.entries(properties)) {
    let check: z.ZodType
    try {
      // Local references point into the root's $defs, which the property needs to carry along.
      check = z.fromJSONSchema((isObject(property) && source.$defs ? { ...property, $defs: source.$defs } : property) as never)
    } catch {
      check = z.unknown()
    }
    shape[key] = required.has(key) ? check.refine((v) => v !== undefined, { message: 'required' }) : check.optional()
  }
  return source.additionalProperties === false ? z.strictObject(shape) : z.looseObject(shape)
}

/**
 * Draft-07 schemas (and what older zod-to-json-schema emits) keep shared parts in `definitions`;
 * zod reads `$defs`. Rename both the container and the references.
 */
function withDefs(schema: JsonObject): JsonObject {
  if (!isObject(schema.definitions) || schema.$defs) return schema
  const { definitions, ...rest } = schema
  return rewriteRefs({ ...rest, $defs: definitions }) as JsonObject
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs)
  if (!isObject(value)) return value
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/definitions/')
        ? '#/$defs/' + v.slice('#/definitions/'.length)
        : rewriteRefs(v),
    ]),
  )
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
