/**
 * core/kit/secrets.ts: every configured secret is replaced in every string and key of what a run records,
 * as written, in any letter case, base64 (standard and URL-safe, at each alignment), percent-encoded
 * and hex; and `find` says where it was, for `cordage scan`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MinSecretLength, Scrubber, StreamScrubber } from '../../core/kit/secrets.ts'

const key = 'sk-Test_Key/42+xyz'
const scrubber = new Scrubber([{ name: 'API_KEY', value: key }])
const R = '[redacted:API_KEY]'

describe('Scrubber.scrubText', () => {
  it('replaces the secret as written and in any letter case, every time it occurs', () => {
    assert.equal(scrubber.scrubText(`a ${key} b ${key}`), `a ${R} b ${R}`)
    assert.equal(scrubber.scrubText(key.toUpperCase()), R)
    assert.equal(scrubber.scrubText(key.toLowerCase()), R)
  })

  it('replaces it percent-encoded and in hex', () => {
    assert.equal(scrubber.scrubText(`q=${encodeURIComponent(key)}&x`), `q=${R}&x`)
    assert.equal(scrubber.scrubText(Buffer.from(key).toString('hex')), R)
    assert.equal(scrubber.scrubText(Buffer.from(key).toString('hex').toUpperCase()), R)
  })

  it('replaces it in base64 and base64url, at each of the three alignments inside a longer text', () => {
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const b64 = Buffer.from(`${prefix}${key}`).toString('base64')
      assert.ok(scrubber.scrubText(b64).includes(R), `base64 after ${prefix.length} bytes`)
      const url = Buffer.from(`${prefix}${key}`).toString('base64url')
      assert.ok(scrubber.scrubText(url).includes(R), `base64url after ${prefix.length} bytes`)
      assert.ok(!scrubber.scrubText(b64).includes(Buffer.from(key).toString('base64').slice(2, 12)))
    }
    // Basic auth: the key in "user:key", base64.
    assert.ok(scrubber.scrubText(`Basic ${Buffer.from(`me:${key}`).toString('base64')}`).includes(R))
  })

  it('leaves text without a secret as it is, and is stateless between calls', () => {
    assert.equal(scrubber.scrubText('nothing here'), 'nothing here')
    for (let i = 0; i < 3; i++) assert.equal(scrubber.scrubText(`x${key}`), `x${R}`, `call ${i}`)
    assert.equal(scrubber.scrubText(`${key}${key}`), `${R}${R}`)
  })

  it('treats regular expression characters in a secret as themselves', () => {
    const s = new Scrubber([{ name: 'S', value: 'a.b*c+d?e(f)' }])
    assert.equal(s.scrubText('a.b*c+d?e(f)'), '[redacted:S]')
    assert.equal(s.scrubText('aXbbbcdde(f)'), 'aXbbbcdde(f)')
    assert.equal(s.scrubText('axb*c+d?e(f)'), 'axb*c+d?e(f)')
  })

  it('replaces the longer of two secrets whole when one contains the other', () => {
    const s = new Scrubber([
      { name: 'SHORT', value: 'abcdefgh' },
      { name: 'LONG', value: 'abcdefgh-ijklmnop' },
    ])
    assert.equal(s.scrubText('abcdefgh-ijklmnop'), '[redacted:LONG]')
    assert.equal(s.scrubText('abcdefgh'), '[redacted:SHORT]')
  })
})

describe('Scrubber: which secrets', () => {
  it(`scrubs values of ${MinSecretLength} characters or more, not shorter ones`, () => {
    assert.equal(MinSecretLength, 8)
    const s = new Scrubber([
      { name: 'SHORT', value: 'abcdefg' },
      { name: 'OK', value: 'abcdefgh' },
    ])
    assert.deepEqual(s.names, ['OK'])
    assert.equal(s.scrubText('abcdefg'), 'abcdefg')
    assert.equal(s.scrubText('abcdefgh'), '[redacted:OK]')
    assert.equal(new Scrubber([{ name: 'X', value: 'abcdefg' }]).active, false)
    assert.equal(new Scrubber([{ name: 'X', value: 42 as unknown as string }]).active, false)
    assert.equal(
      new Scrubber([{ name: 'X', value: Array(8).fill('a') as unknown as string }]).active,
      false,
      'a list of 8 is not a secret of 8 characters',
    )
  })

  it('is inactive without secrets, and then changes nothing', () => {
    const none = new Scrubber([])
    assert.equal(none.active, false)
    assert.deepEqual(none.names, [])
    assert.equal(none.scrubText(key), key)
    const v = { a: key }
    assert.equal(none.scrub(v), v)
    assert.deepEqual(none.find(v), [])
    assert.equal(scrubber.active, true)
  })

  it('lists each name once', () => {
    assert.deepEqual(
      new Scrubber([
        { name: 'A', value: 'aaaaaaaa1' },
        { name: 'A', value: 'aaaaaaaa2' },
        { name: 'B.x-1_', value: 'bbbbbbbb' },
      ]).names,
      ['A', 'B.x-1_'],
    )
  })

  it('refuses a name that could not be shown plainly', () => {
    for (const name of ['has space', 'a]b', '', 'é']) {
      assert.throws(() => new Scrubber([{ name, value: 'long enough value' }]), {
        code: 'invalid_input',
        message: `a secret's name must be letters, digits, "_", "." or "-", got ${JSON.stringify(name)}`,
      })
    }
    assert.doesNotThrow(() => new Scrubber([{ name: 'bad name', value: 'short' }]), 'a value too short to scrub is not checked')
  })

  it('names a variant after the first secret that has it', () => {
    const s = new Scrubber([
      { name: 'FIRST', value: 'same-value-1' },
      { name: 'SECOND', value: 'SAME-VALUE-1' },
    ])
    assert.equal(s.scrubText('same-value-1'), '[redacted:FIRST]')
  })
})

describe('Scrubber.scrub', () => {
  it('copies only what holds a secret, in strings and keys, and leaves the rest (and frozen values) alone', () => {
    const clean = Object.freeze({ a: 1, b: ['x', { c: null }] })
    assert.equal(scrubber.scrub(clean), clean)
    const arr = ['x', 'y']
    assert.equal(scrubber.scrub(arr), arr)
    const mixed = { keep: { n: 1 }, list: ['ok', `Bearer ${key}`], [key]: true, n: 5, t: true, z: null }
    const out = scrubber.scrub(mixed) as Record<string, unknown>
    assert.notEqual(out, mixed)
    assert.deepEqual(out, { keep: { n: 1 }, list: ['ok', `Bearer ${R}`], [R]: true, n: 5, t: true, z: null })
    assert.equal(out.keep, mixed.keep, 'an unchanged member is the same object')
    assert.equal(mixed.list[1], `Bearer ${key}`, 'the original is not changed')
    assert.equal(scrubber.scrub(key), R)
    assert.equal(scrubber.scrub(7), 7)
  })

  it('keeps both members when a scrubbed key collides with another', () => {
    const out = scrubber.scrub({ [R]: 1, [key]: 2 }) as Record<string, unknown>
    assert.deepEqual(out, { [R]: 1, [`${R}#${key.length}`]: 2 })
  })

  it('walks past null, undefined, numbers and booleans', () => {
    const value = { a: null, b: undefined, c: 1, d: false, e: [null, undefined, 2], f: key }
    assert.deepEqual(scrubber.scrub(value), { a: null, b: undefined, c: 1, d: false, e: [null, undefined, 2], f: R })
    const clean = { a: null, b: undefined, c: [undefined] }
    assert.equal(scrubber.scrub(clean), clean)
  })

  it('makes the members of its copy ordinary properties', () => {
    const out = scrubber.scrub({ [key]: 1 }) as Record<string, unknown>
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, R), { value: 1, enumerable: true, writable: true, configurable: true })
  })

  it('scrubs a key alone, and a nested value alone', () => {
    assert.deepEqual(scrubber.scrub({ [key]: 1 }), { [R]: 1 })
    assert.deepEqual(scrubber.scrub({ a: { b: [key] } }), { a: { b: [R] } })
    assert.deepEqual(scrubber.scrub([[key], 'x']), [[R], 'x'])
  })
})

describe('Scrubber.find', () => {
  it('says where each occurrence is, and in which form', () => {
    const b64 = Buffer.from(key).toString('base64')
    const found = scrubber.find({
      a: [1, `x ${key} y ${key.toUpperCase()}`],
      [key]: { b: encodeURIComponent(key) },
      c: b64,
      d: Buffer.from(key).toString('hex'),
    })
    assert.deepEqual(found, [
      { path: '$.a[1]', name: 'API_KEY', form: 'as written' },
      { path: '$.a[1]', name: 'API_KEY', form: 'as written' },
      { path: '${key}', name: 'API_KEY', form: 'as written' },
      { path: `$.${key}.b`, name: 'API_KEY', form: 'percent-encoded' },
      { path: '$.c', name: 'API_KEY', form: 'base64' },
      { path: '$.d', name: 'API_KEY', form: 'hex' },
    ])
    assert.deepEqual(scrubber.find('clean', 'row'), [])
    assert.deepEqual(scrubber.find(key, 'row'), [{ path: 'row', name: 'API_KEY', form: 'as written' }])
  })

  it('names the base64 alignment and the URL-safe alphabet', () => {
    const s = new Scrubber([{ name: 'K', value: 'key>>>???>>>key' }])
    const forms = (text: string) => s.find(text).map((f) => f.form)
    assert.deepEqual(forms(Buffer.from('key>>>???>>>key').toString('base64')), ['base64'])
    assert.deepEqual(forms(Buffer.from('key>>>???>>>key').toString('base64url')), ['base64url'])
    assert.deepEqual(forms(Buffer.from('akey>>>???>>>key').toString('base64')), ['base64 (offset 1)'])
    assert.deepEqual(forms(Buffer.from('abkey>>>???>>>key').toString('base64url')), ['base64url (offset 2)'])
  })

  it('walks past null, undefined, numbers and booleans', () => {
    assert.deepEqual(scrubber.find({ a: null, b: undefined, c: [1, true, null, undefined], d: { e: key } }), [
      { path: '$.d.e', name: 'API_KEY', form: 'as written' },
    ])
    assert.deepEqual(scrubber.find(null), [])
    assert.deepEqual(scrubber.find(undefined), [])
  })

  it('is stateless between calls', () => {
    assert.equal(scrubber.find([key]).length, 1)
    assert.equal(scrubber.find([key]).length, 1)
  })
})

describe('Scrubber.locate', () => {
  it('says where in a text each occurrence starts, and in which form', () => {
    const hex = Buffer.from(key).toString('hex')
    const text = `ab ${key} cd ${hex} ${key.toUpperCase()}`
    assert.deepEqual(scrubber.locate(text), [
      { index: 3, name: 'API_KEY', form: 'as written' },
      { index: 7 + key.length, name: 'API_KEY', form: 'hex' },
      { index: 8 + key.length + hex.length, name: 'API_KEY', form: 'as written' },
    ])
    assert.deepEqual(scrubber.locate('clean'), [])
    assert.deepEqual(new Scrubber([]).locate(key), [])
  })
})

describe('StreamScrubber', () => {
  const stream = (pieces: string[]) => {
    const s = new StreamScrubber(scrubber)
    const shown = pieces.map((p) => s.push(p))
    return { shown, rest: s.end() }
  }

  it('counts as pending only a tail that begins some form of a secret, and nothing without secrets', () => {
    assert.equal(scrubber.pending('nothing here'), 0)
    assert.equal(scrubber.pending(`before ${key.slice(0, 5)}`), 5)
    assert.equal(scrubber.pending(`before ${key.slice(0, 5).toUpperCase()}`), 5, 'in any letter case')
    assert.equal(scrubber.pending(scrubber.scrubText(`before ${key}`)), 0, 'a whole secret is scrubbed, and nothing after it is pending')
    const hex = Buffer.from(key).toString('hex')
    assert.equal(scrubber.pending(`0x ${hex.slice(0, 20)}`), 20, 'the hex form too')
    assert.equal(new Scrubber([]).pending('sk-Test'), 0)
    assert.ok(
      scrubber.pending(`before ${key}`) < key.length,
      'a whole secret is not the beginning of one: it is scrubbed, never held back whole',
    )
  })

  it('never shows a secret split across pieces, and shows everything else once, in order', () => {
    for (let cut = 1; cut < key.length; cut++) {
      const { shown, rest } = stream([`before ${key.slice(0, cut)}`, `${key.slice(cut)} after`])
      const all = shown.join('') + rest
      assert.equal(all, `before ${R} after`, `cut at ${cut}`)
      assert.ok(!shown.some((piece) => piece.includes(key.slice(0, Math.max(cut, 4)))), `cut at ${cut}`)
    }
  })

  it('holds back only what could begin a secret, and gives it out at the end', () => {
    const s = new StreamScrubber(scrubber)
    assert.equal(s.push('x'.repeat(100)), 'x'.repeat(100), 'text that cannot begin a secret passes at once')
    assert.equal(s.push(`then ${key.slice(0, 6)}`), 'then ', 'the start of a secret waits')
    assert.equal(s.push(''), '')
    assert.equal(s.end(), key.slice(0, 6), 'what waited comes out at the end, when it turned out not to be one')
    assert.equal(s.end(), '', 'the end empties it')
  })

  it('passes pieces through as they come without secrets to look for', () => {
    const s = new StreamScrubber(new Scrubber([]))
    assert.equal(s.push('abc'), 'abc')
    assert.equal(s.end(), '')
  })
})
