/**
 * @module host/manifest-check
 * A manifest comes from plugin code the host does not trust yet, so it is checked at run time before
 * anything of the plugin runs: names, semver versions and ranges, and a schemastery config schema.
 */
import { semver } from './semver.ts'
import { z } from 'zod'
import { CordageError } from '../contracts/errors.ts'
import type { Manifest } from '../contracts/manifest.ts'
import { expected } from './expected.ts'

const name = z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and "-", starting with a letter')
const version = z.string().refine((v) => semver.valid(v) !== null, 'a semver version such as 1.0.0')
const range = z.string().refine((r) => semver.validRange(r) !== null, 'a semver range such as ^1.0.0')
const serviceName = z.string().regex(/^[a-z][a-zA-Z0-9.-]*$/, 'a service name such as "policy"')

/** What the required fields hold, for messages about a missing one. */
const Required: Record<string, string> = {
  name: 'a plugin name (lower-case letters, digits and "-")',
  version: 'a semver version such as 1.0.0',
}

const ManifestShape = z
  .object({
    name,
    version,
    description: z.string().optional(),
    provides: z.record(serviceName, version).optional(),
    requires: z.record(serviceName, range).optional(),
    optional: z.record(serviceName, range).optional(),
    config: z
      .any()
      .refine((s) => s === undefined || typeof s === 'function', 'a schemastery schema (Schema.object({...}))')
      .optional(),
    secrets: z.array(z.string().min(1)).optional(),
  })
  .strict()

/**
 * Check a manifest and return it typed, or throw `manifest_invalid` naming the plugin, the field,
 * what was expected and what was found.
 * @param where where the manifest came from, for the message (a file path)
 */
export function checkManifest(raw: unknown, where: string): Manifest {
  const result = ManifestShape.safeParse(raw)
  if (!result.success) {
    const label = typeof (raw as { name?: unknown })?.name === 'string' ? `plugin "${(raw as { name: string }).name}"` : 'plugin'
    const problems = result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        return `${issue.keys.join(', ')}: not a manifest field; fields are ${Object.keys(ManifestShape.shape).join(', ')}`
      }
      const field = issue.path.join('.') || '(manifest)'
      const found = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown>)?.[k as PropertyKey], raw)
      if (found === undefined && issue.path.length === 1 && Required[field]) return `${field}: expected ${Required[field]}, found nothing`
      return `${field}: expected ${expected(issue)}, found ${describe(found)}`
    })
    throw new CordageError('manifest_invalid', `${label} (${where}) has an invalid manifest:\n  ${problems.join('\n  ')}`, {
      data: problems,
    })
  }
  const manifest = result.data as Manifest
  for (const service of Object.keys(manifest.requires ?? {})) {
    if (manifest.provides?.[service]) {
      throw new CordageError('manifest_invalid', `plugin "${manifest.name}" (${where}) both provides and requires "${service}"`)
    }
  }
  return manifest
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'function') return 'a function'
  const text = JSON.stringify(value)
  return text && text.length > 60 ? text.slice(0, 57) + '...' : String(text)
}
