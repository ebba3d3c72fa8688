/**
 * Properties of argument matching on random inputs (fast-check): an unknown operator is always
 * refused, each operator agrees with its definition, and globs agree with a reference implementation.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { globPattern } from '../../core/kit/glob.ts'
import { canonicalJson } from '../../core/kit/hash.ts'
import { ArgOperators, checkArgsPattern, compileArg, compileArgs, type ArgMatcher } from '../../core/kit/match.ts'

const runs = { numRuns: 300 }

/** Argument values: JSON, numbers near the bounds used below, and a missing argument. */
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ min: -5, max: 5, noNaN: true }),
  fc.constantFrom(undefined, null, 0, -0, '', '0', true, false, [], {}),
)
const bound = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -5, max: 5, noNaN: true }))

/** JSON equality as the matcher defines it: canonical forms agree (so key order does not count). */
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b)

describe('argument matching, on random inputs', () => {
  it('refuses every unknown operator, alone or beside known ones, in compileArg, compileArgs and checkArgsPattern', () => {
    const unknownOp = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(ArgOperators as readonly string[]).includes(k))
    fc.assert(
      fc.property(unknownOp, fc.jsonValue({ maxDepth: 1 }), fc.subarray([...ArgOperators]), (op, operand, known) => {
        const matcher: Record<string, unknown> = {}
        for (const k of known) matcher[k] = k === 'exists' ? true : k === 'regex' ? 'a' : k === 'in' ? [1] : k === 'equals' ? 1 : 0
        Object.defineProperty(matcher, op, { value: operand, enumerable: true })
        assert.throws(
          () => compileArg(matcher as ArgMatcher, 'x'),
          (e: Error & { code?: string }) =>
            e.code === 'invalid_input' && e.message.includes(`"${op}"`) && e.message.includes('the operators are'),
        )
        assert.throws(() => compileArgs({ x: matcher as ArgMatcher }), { code: 'invalid_input' })
        assert.match(checkArgsPattern({ x: matcher as ArgMatcher }) ?? '', /unknown operator/)
      }),
      runs,
    )
  })

  it('gt, gte, lt and lte hold exactly for numbers on their side of the bound', () => {
    const defs = {
      gt: (v: number, b: number) => v > b,
      gte: (v: number, b: number) => v >= b,
      lt: (v: number, b: number) => v < b,
      lte: (v: number, b: number) => v <= b,
    }
    fc.assert(
      fc.property(fc.constantFrom('gt', 'gte', 'lt', 'lte') as fc.Arbitrary<keyof typeof defs>, bound, value, (op, b, v) => {
        const want = typeof v === 'number' && defs[op](v, b)
        assert.equal(compileArg({ [op]: b })(v), want)
      }),
      runs,
    )
  })

  it('equals holds exactly for a present value with the same JSON; in for one equal to an item', () => {
    fc.assert(
      fc.property(
        value,
        value,
        fc.array(
          value.filter((x) => x !== undefined),
          { minLength: 1, maxLength: 4 },
        ),
        (wanted, v, items) => {
          if (wanted !== undefined) assert.equal(compileArg({ equals: wanted })(v), v !== undefined && sameJson(wanted, v))
          assert.equal(compileArg({ in: items })(v), v !== undefined && items.some((x) => sameJson(x, v)))
          if (wanted !== undefined) assert.equal(compileArg({ equals: wanted })(wanted), true)
        },
      ),
      runs,
    )
  })

  it('exists holds exactly when the value is present; a number or boolean exactly for itself', () => {
    fc.assert(
      fc.property(value, fc.boolean(), fc.integer({ min: -3, max: 3 }), (v, flag, n) => {
        assert.equal(compileArg({ exists: flag })(v), (v !== undefined) === flag)
        assert.equal(compileArg(flag)(v), v === flag)
        assert.equal(compileArg(n)(v), v === n)
      }),
      runs,
    )
  })

  it('regex agrees with JavaScript RegExp on patterns both engines read alike', () => {
    const atom = fc.constantFrom('a', 'b', '.', '[ab]', '[^a]', '(a|b)', '\\d', 'ab')
    const quant = fc.constantFrom('', '', '*', '+', '?', '{1,2}')
    const pattern = fc
      .tuple(fc.boolean(), fc.array(fc.tuple(atom, quant), { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([start, parts, end]) => `${start ? '^' : ''}${parts.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`)
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', '\n'), maxLength: 8 })
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        assert.equal(compileArg({ regex: p })(t), new RegExp(p).test(t), `/${p}/ on ${JSON.stringify(t)}`)
      }),
      runs,
    )
  })

  it('a glob agrees with a reference implementation on random strings', () => {
    /** The reference: a regular expression, every character literal but `*`. */
    const reference = (glob: string, text: string) =>
      new RegExp(
        `^${glob
          .split('*')
          .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
        's',
      ).test(text)
    const alphabet = fc.constantFrom('a', 'b', '*', '.', '\n')
    fc.assert(
      fc.property(
        fc.string({ unit: alphabet, maxLength: 7 }),
        fc.string({ unit: fc.constantFrom('a', 'b', '.', '\n'), maxLength: 9 }),
        (glob, t) => {
          assert.equal(globPattern(glob).test(t), reference(glob, t), `${JSON.stringify(glob)} on ${JSON.stringify(t)}`)
          assert.equal(compileArg(glob)(t), reference(glob, t))
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('a glob always matches the text it was made from, with any run put in place of each star', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 4 }),
        (parts, fills) => {
          const glob = parts.map((p) => p.replaceAll('*', '')).join('*')
          const text = parts.map((p) => p.replaceAll('*', '')).reduce((acc, p, i) => acc + (fills[i - 1] ?? '') + p)
          assert.equal(globPattern(glob).test(text), true)
        },
      ),
      runs,
    )
  })
})
