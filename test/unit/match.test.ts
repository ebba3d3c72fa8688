/**
 * core/kit/match.ts: tests on tool arguments (policy rule conditions, approval patterns). Each matcher is
 * tried with values that must pass it and values that must fail it: a test that matches by mistake
 * widens permissions.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ArgOperators, checkArgsPattern, compileArg, compileArgs, type ArgMatcher } from '../../core/kit/match.ts'

const holds = (matcher: ArgMatcher, value: unknown) => compileArg(matcher)(value)

describe('compileArg: plain values', () => {
  it('a string is a glob over string values only', () => {
    assert.equal(holds('/tmp/*', '/tmp/a'), true)
    assert.equal(holds('/tmp/*', '/etc/passwd'), false)
    assert.equal(holds('*', 5), false, 'a number is not a string, even for *')
    assert.equal(holds('5', 5), false)
    assert.equal(holds('*', undefined), false)
  })

  it('a number equals that number only', () => {
    assert.equal(holds(100, 100), true)
    assert.equal(holds(100, 101), false)
    assert.equal(holds(100, '100'), false)
    assert.equal(holds(0, -0), true)
    assert.equal(holds(0, false), false)
  })

  it('refuses a number no value can equal', () => {
    assert.throws(() => compileArg(NaN, 'amount'), {
      code: 'invalid_input',
      message: 'argument test "amount": NaN is not a number a value can equal',
    })
    assert.throws(() => compileArg(Infinity, 'amount'), { code: 'invalid_input', message: /Infinity is not a number/ })
  })

  it('a boolean equals that boolean only', () => {
    assert.equal(holds(true, true), true)
    assert.equal(holds(true, false), false)
    assert.equal(holds(false, true), false)
    assert.equal(holds(false, 0), false)
    assert.equal(holds(true, 'true'), false)
    assert.equal(holds(false, undefined), false)
  })

  it('refuses null, a list and other non-objects, saying what a test is', () => {
    assert.throws(() => compileArg(null as unknown as ArgMatcher, 'x'), {
      code: 'invalid_input',
      message:
        'argument test "x": a test is a glob string, a number, a boolean, or an object of operators (equals, regex, in, gt, gte, lt, lte, exists); got null (to test for null, write { equals: null })',
    })
    assert.throws(() => compileArg(['a'] as unknown as ArgMatcher, 'x'), { message: /; got a list$/ })
    assert.throws(() => compileArg(new Date() as unknown as ArgMatcher, 'x'), { message: /; got an object$/ })
    assert.throws(() => compileArg(undefined as unknown as ArgMatcher), {
      message: /^argument test "\(argument\)": .*; got undefined undefined$/,
    })
  })
})

describe('compileArg: operators', () => {
  it('refuses unknown operators, naming each and the operators that exist', () => {
    assert.throws(() => compileArg({ inn: ['a'] } as unknown as ArgMatcher, 'region'), {
      code: 'invalid_input',
      message: 'argument test "region": unknown operator "inn"; the operators are equals, regex, in, gt, gte, lt, lte, exists',
    })
    assert.throws(() => compileArg({ in: ['a'], gtt: 1, eq: 2 } as unknown as ArgMatcher, 'r'), {
      message: 'argument test "r": unknown operators "gtt", "eq"; the operators are equals, regex, in, gt, gte, lt, lte, exists',
    })
    assert.throws(() => compileArg({ constructor: 1 } as unknown as ArgMatcher), { code: 'invalid_input' })
  })

  it('refuses an empty test: it would match every value', () => {
    assert.throws(() => compileArg({}, 'x'), {
      code: 'invalid_input',
      message:
        'argument test "x": an empty test would match every value; name an operator (equals, regex, in, gt, gte, lt, lte, exists), or write { exists: true }',
    })
  })

  it('accepts a test object without a prototype', () => {
    const m = Object.assign(Object.create(null), { gt: 1 }) as ArgMatcher
    assert.equal(holds(m, 2), true)
  })

  it('exists tests presence, and takes only true or false', () => {
    assert.equal(holds({ exists: true }, 0), true)
    assert.equal(holds({ exists: true }, null), true)
    assert.equal(holds({ exists: true }, undefined), false)
    assert.equal(holds({ exists: false }, undefined), true)
    assert.equal(holds({ exists: false }, ''), false)
    assert.throws(() => compileArg({ exists: 'yes' } as unknown as ArgMatcher, 'x'), {
      message: 'argument test "x": exists takes true or false, got "yes"',
    })
  })

  it('equals compares JSON values, key order aside, and never matches a missing argument', () => {
    assert.equal(holds({ equals: { a: 1, b: [2] } }, { b: [2], a: 1 }), true)
    assert.equal(holds({ equals: { a: 1 } }, { a: 1, b: 2 }), false)
    assert.equal(holds({ equals: 1 }, '1'), false)
    assert.equal(holds({ equals: null }, null), true)
    assert.equal(holds({ equals: null }, undefined), false, 'a missing argument is not null')
    assert.equal(holds({ equals: null }, NaN), false, 'a value without a hash equals nothing')
    assert.throws(() => compileArg({ equals: NaN }, 'x'), { message: /^argument test "x": equals: the value has no canonical JSON form/ })
  })

  it('in takes a list, compares like equals, and never matches a missing argument', () => {
    assert.equal(holds({ in: ['eu', 'uk'] }, 'uk'), true)
    assert.equal(holds({ in: ['eu', 'uk'] }, 'us'), false)
    assert.equal(holds({ in: [1, { a: [1] }] }, { a: [1] }), true)
    assert.equal(holds({ in: [null] }, undefined), false)
    assert.equal(holds({ in: [null] }, null), true)
    assert.equal(holds({ in: ['x'] }, NaN), false)
    // An empty list would match nothing: a deny rule with it never fires, so it is refused as a typo.
    assert.throws(() => compileArg({ in: [] }, 'r'), {
      code: 'invalid_input',
      message: 'argument test "r": in: [] matches no value at all (a deny rule with it never fires); list the values, or remove the test',
    })
    assert.throws(() => compileArg({ in: 'eu' } as unknown as ArgMatcher, 'r'), {
      message: 'argument test "r": in takes a list of values, got "eu"',
    })
    assert.throws(() => compileArg({ in: [1, 10n] } as unknown as ArgMatcher, 'r'), { message: /^argument test "r": in\[1\]: / })
  })

  it('regex matches strings on the linear-time engine, and fails other strings and other types', () => {
    assert.equal(holds({ regex: '^INV-[0-9]+$' }, 'INV-42'), true)
    assert.equal(holds({ regex: '^INV-[0-9]+$' }, 'INV-42x'), false)
    assert.equal(holds({ regex: '^INV-[0-9]+$' }, 'inv-42'), false)
    assert.equal(holds({ regex: '4' }, 42), false, 'a number is not searched as text')
    assert.equal(holds({ regex: '' }, undefined), false)
    assert.throws(() => compileArg({ regex: 5 } as unknown as ArgMatcher, 'id'), {
      message: 'argument test "id": regex takes a string, got number 5',
    })
    assert.throws(() => compileArg({ regex: '(a' }, 'id'), {
      message: /^argument test "id": regex: \/\(a\/ is not a valid regular expression/,
    })
    assert.throws(() => compileArg({ regex: '(?=a)' }, 'id'), { message: /lookahead, lookbehind and backreferences are not supported/ })
  })

  it('gt, gte, lt and lte hold on their side of the bound only, the bound itself as defined', () => {
    const cases: [ArgMatcher, number, boolean][] = [
      [{ gt: 100 }, 101, true],
      [{ gt: 100 }, 100, false],
      [{ gt: 100 }, 99, false],
      [{ gte: 100 }, 101, true],
      [{ gte: 100 }, 100, true],
      [{ gte: 100 }, 99.5, false],
      [{ lt: 100 }, 99, true],
      [{ lt: 100 }, 100, false],
      [{ lt: 100 }, 101, false],
      [{ lte: 100 }, 99, true],
      [{ lte: 100 }, 100, true],
      [{ lte: 100 }, 100.5, false],
    ]
    for (const [m, v, want] of cases) assert.equal(holds(m, v), want, `${JSON.stringify(m)} on ${v}`)
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      assert.equal(holds({ [op]: 0 }, '5'), false, `${op} on a string`)
      assert.equal(holds({ [op]: 0 }, undefined), false, `${op} on nothing`)
      assert.equal(holds({ [op]: 0 }, null), false, `${op} on null`)
      assert.throws(() => compileArg({ [op]: '5' } as unknown as ArgMatcher, 'n'), {
        message: `argument test "n": ${op} takes a number, got "5"`,
      })
      assert.throws(() => compileArg({ [op]: NaN } as unknown as ArgMatcher, 'n'), {
        message: `argument test "n": ${op} takes a number, got number NaN`,
      })
    }
  })

  it('every operator of a test must hold', () => {
    const between = compileArg({ gt: 1, lt: 5 })
    assert.deepEqual([0, 1, 2, 4, 5, 6].map(between), [false, false, true, true, false, false])
    const both = compileArg({ exists: true, in: ['a', 'b'], regex: '^a' })
    assert.deepEqual(['a', 'b', 'ab', undefined].map(both), [true, false, false, false])
  })

  it('lists every operator', () => {
    assert.deepEqual([...ArgOperators], ['equals', 'regex', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'])
    assert.ok(Object.isFrozen(ArgOperators))
  })
})

describe('compileArgs', () => {
  it('needs every argument test to pass', () => {
    const test = compileArgs({ amount: { lte: 100 }, 'customer.region': { in: ['eu', 'uk'] } })
    assert.equal(test({ amount: 50, customer: { region: 'eu' } }), true)
    assert.equal(test({ amount: 500, customer: { region: 'eu' } }), false)
    assert.equal(test({ amount: 50, customer: { region: 'us' } }), false)
    assert.equal(test({ amount: 50 }), false)
    assert.equal(compileArgs({})({ anything: 1 }), true, 'no tests: every call')
  })

  it('follows own properties only: a path never reaches into the prototype', () => {
    assert.equal(compileArgs({ 'constructor.name': 'Object' })({}), false)
    assert.equal(compileArgs({ toString: { exists: true } })({}), false)
    assert.equal(compileArgs({ 'a.length': 3 })({ a: 'abc' }), false, 'a string has no own properties to dig into')
    assert.equal(compileArgs({ 'a.length': 3 })({ a: [1, 2, 3] }), true, 'an array has its own length')
    assert.equal(compileArgs({ 'a.b': { exists: false } })({ a: null }), true)
    assert.equal(compileArgs({ 'a.b.c': 1 })({ a: { b: { c: 1 } } }), true)
    assert.equal(compileArgs({ a: 1 })(null), false)
    assert.equal(compileArgs({ a: 1 })('a'), false)
  })

  it('refuses empty parts in a path, and a pattern that is not a mapping', () => {
    for (const path of ['a..b', '.a', 'a.']) {
      assert.throws(() => compileArgs({ [path]: 1 }), {
        code: 'invalid_input',
        message: `argument test "${path}": an argument path is names joined by dots, without empty parts`,
      })
    }
    assert.throws(() => compileArgs({ '': 1 }), {
      code: 'invalid_input',
      message: 'an argument path is names joined by dots, without empty parts',
    })
    assert.throws(() => compileArgs([] as unknown as Record<string, ArgMatcher>), {
      message: 'an argument pattern must be a mapping of argument path → test, got a list',
    })
    assert.throws(() => compileArgs('a' as unknown as Record<string, ArgMatcher>), {
      message: 'an argument pattern must be a mapping of argument path → test, got "a"',
    })
  })

  it('names the path in errors about a test', () => {
    assert.throws(() => compileArgs({ 'order.total': { gtt: 1 } as unknown as ArgMatcher }), {
      message: /^argument test "order.total": unknown operator "gtt"/,
    })
  })
})

describe('checkArgsPattern', () => {
  it('says what is wrong with a pattern, or nothing', () => {
    assert.equal(checkArgsPattern({ a: { in: ['x'] } }), undefined)
    assert.equal(
      checkArgsPattern({ a: { inn: ['x'] } as unknown as ArgMatcher }),
      'argument test "a": unknown operator "inn"; the operators are equals, regex, in, gt, gte, lt, lte, exists',
    )
  })
})
