/**
 * `--set` writes dotted paths into a preset: a path through `__proto__` or `constructor.prototype`
 * never changes Object.prototype of the process, and the second is refused as preset_invalid.
 */
import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { loadPreset } from '../core/host/preset.ts'

const root = resolve(import.meta.dirname, '..')

describe('--set cannot reach Object.prototype (core/host/preset.ts)', () => {
  it('--set __proto__.x=1 does not pollute Object.prototype of the process', () => {
    const proto = Object.prototype as Record<string, unknown>
    try {
      try {
        loadPreset(join(root, 'presets/default.yml'), { sets: ['__proto__.setPolluted=1'] })
      } catch {
        /* a refusal is fine */
      }
      assert.equal(proto.setPolluted, undefined, 'Object.prototype.setPolluted was set by --set')
      // And a later, valid load is not poisoned by it.
      assert.doesNotThrow(() => loadPreset(join(root, 'presets/default.yml')))
    } finally {
      delete proto.setPolluted
    }
  })

  it('--set constructor.prototype.x=1 is refused as preset_invalid, not a TypeError crash', () => {
    const proto = Object.prototype as Record<string, unknown>
    try {
      assert.throws(
        () => loadPreset(join(root, 'presets/default.yml'), { sets: ['constructor.prototype.setPolluted2=1'] }),
        (e: any) => e?.code === 'preset_invalid',
      )
      assert.equal(proto.setPolluted2, undefined)
    } finally {
      delete proto.setPolluted2
    }
  })

  it('--set naming constructor, prototype or __proto__ says why and what to do (the fix, as the file case does)', () => {
    for (const set of ['agents.support.constructor=1', 'agents.support.budgets.prototype.maxSteps=1', '__proto__.x=1']) {
      assert.throws(
        () => loadPreset(join(root, 'presets/default.yml'), { sets: [set] }),
        (e: any) =>
          e?.code === 'preset_invalid' &&
          /is not a preset key \(it would reach JavaScript's object prototype\); rename or remove it$/.test(e.message),
        set,
      )
    }
  })
})
