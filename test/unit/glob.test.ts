/**
 * core/kit/glob.ts: `*` matches any run of characters, everything else matches itself, in linear time.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { globPattern } from '../../core/kit/glob.ts'

const matches = (glob: string, text: unknown) => globPattern(glob).test(text as string)

describe('globPattern', () => {
  it('without a star, matches the text itself only', () => {
    assert.equal(matches('crm_read', 'crm_read'), true)
    assert.equal(matches('crm_read', 'crm_reads'), false)
    assert.equal(matches('crm_read', 'xcrm_read'), false)
    assert.equal(matches('', ''), true)
    assert.equal(matches('', 'a'), false)
  })

  it('treats regular expression characters as themselves', () => {
    assert.equal(matches('a.b', 'a.b'), true)
    assert.equal(matches('a.b', 'axb'), false)
    assert.equal(matches('a?*', 'ab'), false)
    assert.equal(matches('[ab]*', '[ab]x'), true)
  })

  it('a star matches any run of characters, the empty run included', () => {
    assert.equal(matches('crm_*', 'crm_'), true)
    assert.equal(matches('crm_*', 'crm_delete'), true)
    assert.equal(matches('crm_*', 'crx_delete'), false)
    assert.equal(matches('*_read', 'crm_read'), true)
    assert.equal(matches('*_read', 'crm_reader'), false)
    assert.equal(matches('*', ''), true)
    assert.equal(matches('**', 'anything'), true)
    assert.equal(matches('/tmp/*', '/tmp/a/b'), true)
  })

  it('does not let the prefix and the suffix share characters', () => {
    assert.equal(matches('ab*ba', 'aba'), false)
    assert.equal(matches('ab*ba', 'abba'), true)
    assert.equal(matches('a*a', 'a'), false)
    assert.equal(matches('a*a', 'aa'), true)
  })

  it('finds middle parts in order, between the prefix and the suffix', () => {
    assert.equal(matches('a*b*c', 'aXbYc'), true)
    assert.equal(matches('a*b*c', 'abc'), true)
    assert.equal(matches('a*b*c', 'acb'), false)
    assert.equal(matches('a*c*b*d', 'abcd'), false, 'c must come before b')
    assert.equal(matches('*b*', 'abc'), true)
    assert.equal(matches('*b*', 'ac'), false)
    assert.equal(matches('*bc*cd', 'xbcd'), false, 'the middle part may not run into the suffix')
    assert.equal(matches('*bc*cd', 'xbccd'), true)
    assert.equal(matches('x*ab*ab*y', 'xabaaby'), true)
    assert.equal(matches('x*ab*ab*y', 'xaby'), false)
    assert.equal(matches('*a*a*', 'a'), false)
    assert.equal(matches('*a**a*', 'aa'), true)
  })

  it('refuses what is not a string', () => {
    assert.equal(matches('*', 5), false)
    assert.equal(matches('*', undefined), false)
    assert.equal(matches('5', 5), false)
  })

  it('is frozen and keeps its source', () => {
    const g = globPattern('crm_*')
    assert.equal(g.source, 'crm_*')
    assert.ok(Object.isFrozen(g))
  })

  it('takes linear time on a pattern that backtracks in a regular expression', () => {
    const started = performance.now()
    assert.equal(matches('*a*a*a*a*a*a*a*b', 'a'.repeat(50_000)), false)
    assert.ok(performance.now() - started < 1_000)
  })
})
