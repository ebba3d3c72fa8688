/**
 * core/kit/env.ts: a child gets the harness's PATH, HOME, locale and the like, not its keys or test
 * runner variables, unless it inherits the whole environment; the extra variables win over both.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MinimalEnvNames, minimalEnv } from '../../core/kit/env.ts'

const harness: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/ada',
  LANG: 'en_GB.UTF-8',
  SystemRoot: 'C:\\Windows',
  OPENAI_API_KEY: 'sk-secret',
  NODE_TEST_CONTEXT: 'child-v8',
  path: '/lower/case/is/another/name',
}

describe('minimalEnv', () => {
  it('passes only the listed names the harness has, never its keys or test runner variables', () => {
    assert.deepEqual(minimalEnv({}, { from: harness }), {
      PATH: '/usr/bin:/bin',
      HOME: '/home/ada',
      LANG: 'en_GB.UTF-8',
      SystemRoot: 'C:\\Windows',
    })
  })

  it('adds the extra variables, which win over the harness', () => {
    assert.deepEqual(minimalEnv({ HOME: '/tmp/home', CI: '1' }, { from: harness }), {
      PATH: '/usr/bin:/bin',
      HOME: '/tmp/home',
      LANG: 'en_GB.UTF-8',
      SystemRoot: 'C:\\Windows',
      CI: '1',
    })
  })

  it('with inherit, passes the whole environment, then the extra variables', () => {
    assert.deepEqual(minimalEnv({ OPENAI_API_KEY: 'sk-test' }, { inherit: true, from: harness }), { ...harness, OPENAI_API_KEY: 'sk-test' })
  })

  it('returns a new object: changing it leaves the harness environment alone', () => {
    const env = minimalEnv({}, { inherit: true, from: harness })
    env.PATH = '/elsewhere'
    assert.equal(harness.PATH, '/usr/bin:/bin')
  })

  it('reads process.env by default', () => {
    const env = minimalEnv()
    assert.equal(env.PATH, process.env.PATH)
    assert.equal(env.NODE_TEST_CONTEXT, undefined, 'node --test sets it in this process; a child must not get it')
    for (const name of Object.keys(env)) assert.ok(MinimalEnvNames.includes(name), name)
  })

  it('lists the names a build needs on Unix and Windows, and the list cannot be changed', () => {
    for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'SystemRoot', 'PATHEXT']) assert.ok(MinimalEnvNames.includes(name), name)
    assert.throws(() => (MinimalEnvNames as string[]).push('OPENAI_API_KEY'), TypeError)
  })
})
