/**
 * @module eval/variants
 * The ways a suite is run: the preset as it is (`full`), with one mechanism switched off (`--ablate`),
 * with one setting changed (`--vary`), or with a plugin at another version (`--plugin`). Flags are
 * checked here, before any case runs: an ablation or axis the engine does not know is an error that
 * lists what it knows, never a variant that silently equals the full harness.
 */
import { CordageError } from '../contracts/errors.ts'
import { closest } from '../kit/closest.ts'
import type { Budgets } from '../contracts/data.ts'
import type { Variant } from './result.ts'

/** Mechanisms by the service they are; any other name is taken as a plugin's name. */
export const Mechanisms: Record<string, { service: string; label: string }> = {
  verifier: { service: 'verifier', label: 'no verification (a verifier that passes every answer)' },
  policy: { service: 'policy', label: 'no policy (every action allowed, no approval)' },
  progress: { service: 'progress', label: 'no progress detection' },
  compaction: { service: 'compactor', label: 'no compaction' },
  'tool-search': { service: 'tools', label: 'no tool search (every tool visible, tools-registry)' },
}

const BudgetKeys: readonly (keyof Budgets)[] = ['maxSteps', 'deadlineMs', 'maxTokens', 'maxCostUsd', 'maxRepairs']

export interface VariantFlags {
  ablate?: readonly string[]
  vary?: readonly string[]
  plugin?: readonly string[]
}

/** The variants a command line asks for, the reference (what others are compared with) first. */
export function parseVariants(flags: VariantFlags): Variant[] {
  const variants: Variant[] = []
  const plugins = (flags.plugin ?? []).map(parsePlugin)
  if (plugins.length === 1)
    throw new CordageError(
      'invalid_input',
      `--plugin ${flags.plugin![0]}: give two or more (--plugin NAME@A --plugin NAME@B) to compare versions`,
    )
  if (plugins.length) variants.push(...plugins)
  else variants.push({ id: 'full', kind: 'full', label: 'the preset as it is' })
  for (const item of (flags.ablate ?? []).flatMap((a) => a.split(',')).map((a) => a.trim())) {
    if (!item) throw new CordageError('invalid_input', '--ablate: an empty name; give mechanisms or plugin names separated by commas')
    if (!/^[a-z0-9][a-z0-9-]*$/.test(item))
      throw new CordageError(
        'invalid_input',
        `--ablate ${item}: not a mechanism (${Object.keys(Mechanisms).join(', ')}) or a plugin name (lower case, digits, dashes)`,
      )
    variants.push({ id: `-${item}`, kind: 'ablate', mechanism: item, label: Mechanisms[item]?.label ?? `without plugin ${item}` })
  }
  for (const text of flags.vary ?? []) variants.push(...parseVary(text))
  const ids = new Set<string>()
  for (const v of variants) {
    if (ids.has(v.id)) throw new CordageError('invalid_input', `variant ${v.id} is asked for twice`)
    ids.add(v.id)
  }
  return variants
}

function parsePlugin(text: string): Variant {
  const match = /^([a-z0-9][a-z0-9-]*)@(\S+)$/.exec(text)
  if (!match) throw new CordageError('invalid_input', `--plugin ${text}: expected NAME@RANGE, for example policy-rules@^2.0.0`)
  return { id: `${match[1]}@${match[2]}`, kind: 'plugin', plugin: match[1], range: match[2], label: `${match[1]} at ${match[2]}` }
}

function parseVary(text: string): Variant[] {
  const eq = text.indexOf('=')
  if (eq <= 0)
    throw new CordageError('invalid_input', `--vary ${text}: expected KEY=V1,V2 (maxSteps=1,3,8, tools=20,200 or PLUGIN.key=a,b)`)
  const axis = text.slice(0, eq).trim()
  const values = text
    .slice(eq + 1)
    .split(',')
    .map((v) => v.trim())
  if (!values.length || values.some((v) => !v))
    throw new CordageError('invalid_input', `--vary ${text}: an empty value; separate values with commas`)
  const numeric = axis === 'tools' || (BudgetKeys as readonly string[]).includes(axis)
  if (!numeric && !axis.includes('.')) {
    const known = ['tools', ...BudgetKeys]
    const near = closest(axis, known)
    throw new CordageError(
      'invalid_input',
      `--vary ${axis}: not an axis${near ? ` (did you mean ${near}?)` : ''}; axes are ${known.join(', ')}, or PLUGIN.key for a plugin's config`,
    )
  }
  return values.map((raw) => {
    let value: string | number = raw
    if (numeric) {
      const n = Number(raw)
      if (!Number.isFinite(n) || n < 0 || (axis !== 'maxCostUsd' && !Number.isInteger(n)))
        throw new CordageError(
          'invalid_input',
          `--vary ${axis}=${raw}: ${axis} takes ${axis === 'maxCostUsd' ? 'a number' : 'a whole number'} ≥ 0`,
        )
      if (axis === 'tools' && n > 2000) throw new CordageError('invalid_input', `--vary tools=${raw}: at most 2000 distractor tools`)
      value = n
    }
    return { id: `${axis}=${raw}`, kind: 'vary', axis, value, label: `${axis} = ${raw}` } satisfies Variant
  })
}
