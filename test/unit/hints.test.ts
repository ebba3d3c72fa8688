import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { withPresetFlags } from '../../core/cli/hints.ts'

describe('withPresetFlags', () => {
  const flags = { preset: 'p.yml' }
  const preset = resolve('p.yml')

  it('adds the preset to a command a message suggests', () => {
    assert.equal(
      withPresetFlags('act on it first: cordage approve run_1 s1.a1', flags, 'cordage'),
      `act on it first: cordage approve run_1 s1.a1 --preset ${preset}`,
    )
  })

  it("keeps a child run's id whole (the parent's id, a dot, its call)", () => {
    assert.equal(
      withPresetFlags('or cancel it (cordage cancel run_ab12.s1.a1 --agent helper) first', flags, 'cordage'),
      `or cancel it (cordage cancel run_ab12.s1.a1 --agent helper --preset ${preset}) first`,
    )
  })

  it('leaves a usage synopsis as it is: it is not a command to copy', () => {
    const usage = 'usage: cordage effects RUN [--preset FILE] [--json]'
    assert.equal(withPresetFlags(`"effects" takes RUN, got none; ${usage}`, flags, 'cordage'), `"effects" takes RUN, got none; ${usage}`)
  })

  it('leaves prose that names a command without its arguments as it is', () => {
    assert.equal(withPresetFlags('the cordage approve command', flags, 'cordage'), 'the cordage approve command')
  })
})
