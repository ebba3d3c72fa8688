/**
 * core/kit/regex.ts: patterns from presets and from the model on the linear-time engine, with JavaScript's
 * flags and a clear error for what the engine cannot do.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RE2JS } from 're2js'
import { MaxRegexProgram, regexProblem, safeRegex } from '../../core/kit/regex.ts'

const Unsupported =
  ' (lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process); write the pattern without them'

describe('safeRegex', () => {
  it('tests, finds and replaces like a RegExp', () => {
    const re = safeRegex('\\[source: ([^\\]]+)\\]')
    assert.equal(re.source, '\\[source: ([^\\]]+)\\]')
    assert.equal(re.test('see [source: policy/refunds#2]'), true)
    assert.equal(re.test('see source: policy'), false)
    const m = re.exec('a [source: x] b [source: y]')!
    assert.equal(m[0], '[source: x]')
    assert.equal(m[1], 'x')
    assert.equal(m.index, 2)
    assert.equal(re.exec('nothing'), null)
    assert.deepEqual(
      [...re.matchAll('[source: x][source: y]')].map((x) => [x[1], x.index]),
      [
        ['x', 0],
        ['y', 11],
      ],
    )
    assert.equal(
      re.replace('a [source: x] b [source: y] c', (x) => `<${x[1]}>`),
      'a <x> b <y> c',
    )
    assert.equal(
      re.replace('no match here', () => 'X'),
      'no match here',
    )
    assert.ok(Object.isFrozen(re))
  })

  it('honours i, m and s, accepts g and u, and shows the flags it honours, sorted, once', () => {
    assert.equal(safeRegex('abc').test('ABC'), false)
    assert.equal(safeRegex('abc', 'i').test('ABC'), true)
    assert.equal(safeRegex('^b$').test('a\nb'), false)
    assert.equal(safeRegex('^b$', 'm').test('a\nb'), true)
    assert.equal(safeRegex('a.b').test('a\nb'), false)
    assert.equal(safeRegex('a.b', 's').test('a\nb'), true)
    assert.equal(safeRegex('a', 'gu').flags, '')
    assert.equal(safeRegex('a', 'smigsi').flags, 'ims')
    assert.equal(safeRegex('a', 'ug').test('a'), true)
    assert.equal(safeRegex('A', 'mi').test('a'), true, 'several flags combine')
    assert.equal(safeRegex('^A.B$', 'ms').test('x\na\nB'), false)
    assert.equal(safeRegex('^A.B$', 'msi').test('x\na\nb'), true)
  })

  it('refuses an unknown flag', () => {
    assert.throws(() => safeRegex('a', 'y'), {
      code: 'invalid_input',
      message: 'regular expression flag "y" is not supported; use i, m or s',
    })
    assert.throws(() => safeRegex('a', 'ix'), { message: /flag "x"/ })
  })

  it('refuses a pattern that is not a string', () => {
    assert.throws(() => safeRegex(5 as unknown as string), {
      code: 'invalid_input',
      message: 'a regular expression must be a string, got number',
    })
    assert.throws(() => safeRegex(null as unknown as string), { message: 'a regular expression must be a string, got null' })
  })

  it("says what is wrong with a pattern that does not compile, without the engine's prefix", () => {
    assert.throws(() => safeRegex('(a'), {
      code: 'invalid_input',
      message: '/(a/ is not a valid regular expression: missing closing ): `(a`',
    })
    assert.throws(() => safeRegex('a{2,1}'), { message: '/a{2,1}/ is not a valid regular expression: invalid repeat count: `{2,1}`' })
  })

  it('says why lookaround and backreferences are refused, and what to write instead', () => {
    for (const p of ['(?=a)', '(?!a)', '(?<=a)b', '(?<!a)b', '(a)\\1', '(a)(b)\\2']) {
      assert.throws(
        () => safeRegex(p),
        (e: Error) => e.message.startsWith(`/${p}/ is not a valid regular expression: `) && e.message.endsWith(Unsupported),
        p,
      )
    }
    // Other mistakes, with a backslash or an escape the engine does not know, get no such explanation.
    for (const p of ['[z-a]', '(\\d', '\\q', 'a{2,1}\\w']) assert.ok(!regexProblem(p)!.endsWith(Unsupported), p)
  })

  it('runs a catastrophic pattern in linear time', () => {
    const started = performance.now()
    assert.equal(safeRegex('^(a+)+$').test('a'.repeat(5_000) + 'b'), false)
    assert.ok(performance.now() - started < 2_000)
  })
})

describe('regexProblem', () => {
  it('is undefined for a good pattern and the message otherwise', () => {
    assert.equal(regexProblem('a+'), undefined)
    assert.equal(regexProblem('a', 'i'), undefined)
    assert.equal(regexProblem('a', 'q'), 'regular expression flag "q" is not supported; use i, m or s')
    assert.equal(regexProblem(['a']), 'a regular expression must be a string, got object')
  })
})

describe('the size of a pattern', () => {
  it(`refuses a pattern that compiles to more than ${MaxRegexProgram} instructions, saying how many and what to write instead`, () => {
    assert.equal(MaxRegexProgram, 2000)
    assert.throws(
      () => safeRegex('a{1000}b{1000}'),
      (e: Error & { code?: string }) =>
        e.code === 'invalid_input' &&
        /^\/a\{1000\}b\{1000\}\/ is too large a pattern: it compiles to \d+ instructions, more than 2000 \(large repetition counts such as \{1000\} multiply it\); matching costs time per character in proportion; write it with smaller repetition counts or fewer alternatives$/.test(
          e.message,
        ),
    )
  })

  it('shortens a long pattern in the message', () => {
    const long = 'x'.repeat(70) + 'a{1000}b{1000}'
    assert.throws(
      () => safeRegex(long),
      (e: Error) => e.message.startsWith(`/${long.slice(0, 80)}…/ is too large a pattern`),
    )
    const eighty = 'x'.repeat(66) + 'a{1000}b{1000}'
    assert.equal(eighty.length, 80)
    assert.throws(
      () => safeRegex(eighty),
      (e: Error) => e.message.startsWith(`/${eighty}/ is too large a pattern`),
    )
  })

  it('accepts a pattern of exactly the limit, and refuses one instruction more', () => {
    assert.equal(RE2JS.compile('a{1000}b{998}').programSize(), 2000)
    assert.equal(regexProblem('a{1000}b{998}'), undefined)
    assert.match(regexProblem('a{1000}b{999}')!, /it compiles to 2001 instructions, more than 2000/)
  })
})
