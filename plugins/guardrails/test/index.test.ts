import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parse } from 'yaml'
import { readService, type CordageError, type GuardInput, type GuardrailService, type GuardStage, type RunEvent, type Tool } from 'cordage'
import { plug } from '../../../test/plug.ts'
import { refundAnswer, supportDesk } from '../../../test/helpers.ts'
import plugin, { Builtins, cardBrand, checkConfig, Guardrails, isCardNumber, isIban, luhn, stringsOf } from '../index.ts'
import manifest, { type Config } from '../manifest.ts'
import { Customer } from './fixtures/customer-desk/index.ts'

// Test values. None is a live credential: the shapes are the providers', the contents made up.
const GithubToken = 'ghp_' + 'R2d2C3po'.repeat(4) + 'Bb8X'
const OpenAiKey = 'sk-proj-4fJ9xQ2mL7pN3vB8rT6wY1zK5hG0dS'
const AwsKeyId = 'AKIAIOSFODNN7EXAMPLE'
const Visa = '4111 1111 1111 1111'

const found = (name: keyof typeof Builtins, text: string) => Builtins[name].find(text).map((s) => text.slice(s.start, s.end))
const guardrails = (config: Record<string, unknown> = {}) => {
  const resolved = manifest.config(config) as Config
  return new Guardrails(resolved, '1.0.0', undefined)
}
const tool = (name: string) => ({ name, sideEffect: 'none' }) as Tool
const input = (stage: GuardStage, content: unknown, toolName = 'crm_lookup'): GuardInput => ({
  stage,
  runId: 'r',
  agent: 'support',
  state: {} as never,
  ...(stage === 'answer'
    ? { text: content as string }
    : stage === 'tool_input'
      ? { tool: tool(toolName), args: content }
      : { tool: tool(toolName), text: content as string }),
})
const entry = (config: Record<string, unknown> = {}) => ({ plugin: 'guardrails', config })
const customerDesk = { path: resolve(import.meta.dirname, 'fixtures/customer-desk') }
const lookup = { tool: 'lookup_policy', args: { topic: 'refunds' } }
const trips = (events: RunEvent[]) => events.filter((e) => e.type === 'guard/tripped') as RunEvent<'guard/tripped'>[]
const ofType = <K extends RunEvent['type']>(events: RunEvent[], type: K, actionId?: string) =>
  events.filter((e) => e.type === type && (actionId === undefined || e.actionId === actionId)) as RunEvent<K>[]

describe('guardrails detectors', () => {
  it('secrets: finds API keys, AWS key ids, GitHub tokens, private keys and bearer tokens', () => {
    assert.deepEqual(found('secrets', `key=${OpenAiKey};`), [OpenAiKey])
    assert.deepEqual(found('secrets', 'live sk_live_' + '4eC39HqLyjWDarjtT1zdp7dc'), ['sk_live_4eC39HqLyjWDarjtT1zdp7dc'])
    assert.deepEqual(found('secrets', `aws_access_key_id = ${AwsKeyId}`), [AwsKeyId])
    assert.deepEqual(found('secrets', `token: ${GithubToken}.`), [GithubToken])
    assert.deepEqual(found('secrets', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'), [
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
    ])
    assert.deepEqual(found('secrets', 'Authorization: Bearer abcDEF123456ghiJKL789.x-y'), ['abcDEF123456ghiJKL789.x-y'])
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----'
    assert.deepEqual(found('secrets', `here:\n${pem}\nthere`), [pem])
    // A key cut off by a shortened observation is still a key, to the end of the text.
    assert.deepEqual(found('secrets', 'x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt'), [
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt',
    ])
  })

  it('secrets: leaves look-alikes alone', () => {
    for (const text of [
      'pip install sk-learn-documentation-pages', // letters only: a word, not a key
      'ask-me-anything-about-our-refund-policy-please',
      'the bearer of this note may collect the parcel',
      'Bearer short',
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh\n-----END PUBLIC KEY-----',
      'AKIA1234', // too short
      'ghp_tooShort123',
      'XAKIAIOSFODNN7EXAMPLEX', // inside a longer word
    ])
      assert.deepEqual(found('secrets', text), [], text)
  })

  it('card: the Luhn check and the brand ranges', () => {
    assert.equal(luhn('4111111111111111'), true)
    assert.equal(luhn('4111111111111112'), false)
    assert.equal(luhn('79927398713'), true)
    assert.equal(cardBrand('5555555555554444'), 'mastercard')
    assert.equal(cardBrand('378282246310005'), 'amex')
    assert.equal(cardBrand('6011111111111117'), 'discover')
    assert.equal(cardBrand('9111111111111111'), undefined)
    assert.equal(isCardNumber('4111-1111-1111-1111'), true)
    assert.equal(isCardNumber('4111 1111 1111 1112'), false)
  })

  it('card: finds card numbers as people write them, and only those', () => {
    const text = `visa ${Visa}, mc 5555-5555-5555-4444, amex 3782 822463 10005, plain 4012888888881881.`
    assert.deepEqual(found('card', text), [Visa, '5555-5555-5555-4444', '3782 822463 10005', '4012888888881881'])
    for (const text of [
      'card 4111 1111 1111 1112', // fails Luhn
      'order 9111111111111110', // passes Luhn, no brand starts with 9
      'tracking 1Z999AA10123456784',
      'id 41111111111111111111111', // a longer run of digits is not a card
      'at 20240115123042 utc',
      'call +1 555 010 0199',
    ])
      assert.deepEqual(found('card', text), [], text)
    assert.equal(
      luhn('9111111111111110') && luhn('20240115123042'),
      true,
      'the numbers above really pass Luhn: only the brand check keeps them out',
    )
  })

  it('email: addresses, not file names, versions or local hosts', () => {
    assert.deepEqual(found('email', 'write to dana.reyes@example.com or a.b+c@mail.example.co.uk.'), [
      'dana.reyes@example.com',
      'a.b+c@mail.example.co.uk',
    ])
    for (const text of ['icon@2x.png', 'npm i left-pad@1.3.0', 'root@localhost', 'ping @support', 'a@b'])
      assert.deepEqual(found('email', text), [], text)
  })

  it('phone: international and North American forms only', () => {
    assert.deepEqual(found('phone', 'call +1 555 010 0199, +44 20 7946 0958, (555) 010-0199 or 555-010-0199'), [
      '+1 555 010 0199',
      '+44 20 7946 0958',
      '(555) 010-0199',
      '555-010-0199',
    ])
    for (const text of [
      'order 5550100199',
      'on 2024-01-15',
      'within +30 days',
      'version 1.2.3.4',
      'ticket T-1001',
      'ISBN 978-3-16-148410-0',
    ]) {
      assert.deepEqual(found('phone', text), [], text)
    }
  })

  it('iban: the mod-97 check', () => {
    assert.equal(isIban('DE89370400440532013000'), true)
    assert.equal(isIban('DE89370400440532013001'), false)
    assert.deepEqual(found('iban', 'pay to DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432'), [
      'DE89 3704 0044 0532 0130 00',
      'GB82WEST12345698765432',
    ])
    assert.deepEqual(found('iban', 'not DE89 3704 0044 0532 0130 01, not AB12'), [])
  })
  it('phone: finds what the single pattern it replaced found, span for span', () => {
    // The international form used to be this one pattern; it now walks the same choices without
    // repeating the ones that failed (detectors.ts, phoneEnd).
    const before = /(?<![\w+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?![\w])/g
    const northAmerican = /(?<![\w+(-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\w-])/g
    const digits = (m: string) => m.replace(/\D/g, '').length
    const reference = (text: string) =>
      [...[...text.matchAll(before)].filter((m) => digits(m[0]) >= 8 && digits(m[0]) <= 15), ...text.matchAll(northAmerican)]
        .map((m) => [m.index!, m.index! + m[0].length])
        .sort((a, b) => a[0] - b[0] || b[1] - a[1])
    for (const text of [
      '+123 4 5 6 7 8 9',
      '+1 2 3 4 5 6 7 8 9',
      '+44 20 7946 0958abc',
      '+1 555 010 0199)x',
      '+1 (555) 010-0199+44 20 7946 0958',
      '+12345678901234567890',
    ]) {
      assert.deepEqual(
        Builtins.phone.find(text).map((s) => [s.start, s.end]),
        reference(text),
        text,
      )
    }
    const pieces = ['+', '+1', '+44 ', '1', '0', '9', ' 5', '55', '1234', ' ', '.', '-', '(', ')', 'a', '_', '\n', '\u{1F600}']
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join('')
        assert.deepEqual(
          Builtins.phone.find(text).map((s) => [s.start, s.end]),
          reference(text),
          JSON.stringify(text),
        )
      }),
      { numRuns: 20_000 },
    )
  })

  it('every detector reads a long crafted text in time linear in its length', { timeout: 20_000 }, () => {
    // Each is a worst case for one pattern on a backtracking engine. The bearer token's accept was
    // quadratic (minutes for this one), the international phone pattern ~10 s per megabyte.
    const megabyte = (unit: string) => unit.repeat(Math.ceil(1_000_000 / unit.length)).slice(0, 1_000_000)
    const texts = [
      'Authorization: Bearer ' + 'A'.repeat(1_000_000),
      megabyte('+1' + '2'.repeat(30) + ' '),
      megabyte('+123a '),
      '-----BEGIN RSA PRIVATE KEY-----\n' + 'A'.repeat(1_000_000),
      megabyte('-----BEGIN A B PRIVATE KEY-----' + '-----END A B PRIVATE KEX-----'),
      ' eyJ' + 'a'.repeat(1_000_000),
      megabyte('.eyJaaaaaaaa'),
      megabyte(' ghp_' + 'a'.repeat(300) + '_'),
      'a@' + 'b.'.repeat(500_000) + 'b',
      megabyte('x'.repeat(60) + '@' + 'b-'.repeat(30) + 'c '),
      megabyte('1 '),
      megabyte('DE89 ' + 'AAAA '.repeat(10)),
    ]
    for (const text of texts) for (const detector of Object.values(Builtins)) detector.find(text)
    assert.deepEqual(found('secrets', 'Bearer ' + 'A'.repeat(20) + 'b'), ['A'.repeat(20) + 'b'])
    assert.deepEqual(found('secrets', 'Bearer ' + 'A'.repeat(20)), [], 'one case only: a word, not a token')
  })
})

describe('guardrails verdicts', () => {
  it('by default blocks a secret in arguments, and redacts secrets and cards in results and answers', () => {
    const g = guardrails()
    const blocked = g.check(input('tool_input', { ticketId: 'T-1', items: [{ note: `key ${GithubToken}` }] }))
    assert.deepEqual(blocked, {
      action: 'block',
      guard: 'secrets',
      reason: 'found 1 secret (github token) in the arguments (items[0].note)',
    })
    // A card in arguments is not checked by default (a payment tool needs one).
    assert.deepEqual(g.check(input('tool_input', { card: Visa })), { action: 'pass' })
    const output = g.check(input('tool_output', `{"card":"${Visa}","token":"${OpenAiKey}","ok":true}`))
    assert.deepEqual(output, {
      action: 'redact',
      guard: 'secrets,card',
      reason: 'redacted 1 secret (sk- api key), 1 card in the result of crm_lookup',
      text: '{"card":"[redacted:card]","token":"[redacted:secret]","ok":true}',
    })
    const answer = g.check(input('answer', `Refunded to card ${Visa}.`))
    assert.deepEqual(answer, {
      action: 'redact',
      guard: 'card',
      reason: 'redacted 1 card in the answer',
      text: 'Refunded to card [redacted:card].',
    })
    assert.deepEqual(g.check(input('answer', 'Refunds take 30 days [source: policy/refunds#2].')), { action: 'pass' })
  })

  it('never puts what it found in a reason, not even a secret used as a key', () => {
    const g = guardrails({ detectors: { email: { stages: ['tool_input', 'answer'] } } })
    const verdict = g.check(input('tool_input', { [AwsKeyId]: 1, contact: 'dana.reyes@example.com', n: 4111111111111111 }))
    assert.equal(verdict.action, 'block')
    const text = JSON.stringify(verdict)
    for (const secret of [AwsKeyId, 'dana.reyes', '4111']) assert.ok(!text.includes(secret), `${secret} in ${text}`)
    assert.match(text, /found 1 secret \(aws access key id\), 1 email in the arguments \(<key>, contact\)/)
  })

  it('checks keys, string values and numbers of the arguments, deep', () => {
    assert.deepEqual(stringsOf({ a: 'x', b: [1, { c: 'y' }] }), [
      { path: ['a'], text: 'a' },
      { path: ['a'], text: 'x' },
      { path: ['b'], text: 'b' },
      { path: ['b', 0], text: '1' },
      { path: ['b', 1, 'c'], text: 'c' },
      { path: ['b', 1, 'c'], text: 'y' },
    ])
    let deep: unknown = `Bearer ${OpenAiKey}`
    for (let i = 0; i < 20000; i++) deep = [deep]
    assert.equal(guardrails().check(input('tool_input', deep)).action, 'block')
  })

  it('applies each detector at its stages with its action; a redact at tool_input blocks', () => {
    const g = guardrails({
      detectors: {
        secrets: { action: 'block' },
        card: { stages: ['tool_input', 'answer'] },
        email: { stages: ['answer'], replacement: '<email>' },
      },
      patterns: [{ name: 'order-id', pattern: 'ORD-\\d{6}', stages: ['tool_output'], action: 'redact' }],
    })
    assert.equal(g.check(input('tool_output', `token ${GithubToken}`)).action, 'block')
    assert.equal(g.check(input('tool_input', { card: Visa })).action, 'block')
    assert.deepEqual(g.check(input('tool_output', `card ${Visa}, ORD-123456, dana@example.com`)), {
      action: 'redact',
      guard: 'order-id',
      reason: 'redacted 1 order-id in the result of crm_lookup',
      text: `card ${Visa}, [redacted:order-id], dana@example.com`,
    })
    const answer = g.check(input('answer', 'Mail dana@example.com about ORD-123456.'))
    assert.deepEqual(answer, {
      action: 'redact',
      guard: 'email',
      reason: 'redacted 1 email in the answer',
      text: 'Mail <email> about ORD-123456.',
    })
    // A block anywhere in the text wins over the redactions around it, and the reason counts them all.
    assert.deepEqual(g.check(input('answer', `Mail dana@example.com, key ${GithubToken}`)), {
      action: 'block',
      guard: 'secrets',
      reason: 'found 1 secret (github token), 1 email in the answer',
    })
  })

  it('lets an exempt tool receive and return what a detector finds, but never exempts the answer', () => {
    const g = guardrails({ exempt: [{ tool: 'vault_*', detectors: ['secrets'] }] })
    assert.deepEqual(g.check(input('tool_input', { secret: GithubToken }, 'vault_put')), { action: 'pass' })
    assert.deepEqual(g.check(input('tool_output', GithubToken, 'vault_get')), { action: 'pass' })
    assert.equal(g.check(input('tool_output', `${GithubToken} ${Visa}`, 'vault_get')).action, 'redact', 'only secrets are exempt')
    assert.equal(g.check(input('tool_input', { secret: GithubToken }, 'crm_lookup')).action, 'block')
    assert.equal(g.check(input('answer', GithubToken)).action, 'redact')
    const inputOnly = guardrails({ exempt: [{ tool: ['vault_put', 'kms_*'], detectors: ['*'], stages: ['tool_input'] }] })
    assert.equal(inputOnly.check(input('tool_input', { secret: GithubToken }, 'kms_wrap')).action, 'pass')
    assert.equal(inputOnly.check(input('tool_output', GithubToken, 'vault_put')).action, 'redact')
  })

  it('gives overlapping text to the detector listed first', () => {
    // A card number inside a custom pattern's match: the built-in card detector claims it first.
    const g = guardrails({ patterns: [{ name: 'long-number', pattern: '\\d[\\d ]{10,}\\d', stages: ['answer'] }] })
    assert.deepEqual(g.check(input('answer', `card ${Visa} ref 1234 5678 9012`)), {
      action: 'redact',
      guard: 'card,long-number',
      reason: 'redacted 1 card, 1 long-number in the answer',
      text: 'card [redacted:card] ref [redacted:long-number]',
    })
  })

  it('names its version after the plugin and a hash of the config', () => {
    const versions = new Set([
      guardrails().version,
      guardrails({ detectors: { email: true } }).version,
      guardrails({ exempt: [{ tool: 'x' }] }).version,
    ])
    assert.equal(versions.size, 3)
    assert.match(guardrails().version, /^guardrails@1\.0\.0\+[0-9a-f]{8}$/)
    assert.equal(guardrails().version, guardrails({ detectors: { secrets: true } }).version)
  })

  it('refuses a bad config at start, naming the guard', async () => {
    for (const [config, message] of [
      [
        {
          patterns: [
            { name: 'a', pattern: 'a' },
            { name: 'a', pattern: 'b' },
          ],
        },
        /pattern name "a" is used twice/,
      ],
      [{ patterns: [{ name: 'email', pattern: 'b' }] }, /pattern "email" has the name of a built-in detector/],
      [{ exempt: [{ tool: 'vault_*', detectors: ['secret'] }] }, /exempt\[0\] names "secret", which is neither a detector nor a pattern/],
      [{ detectors: { email: { stage: ['answer'] } } }, /detector "email" has no option "stage"/],
    ] as [Record<string, unknown>, RegExp][]) {
      assert.throws(
        () => checkConfig(manifest.config(config) as Config),
        (error: CordageError) => error.code === 'plugin_config_invalid' && message.test(error.message),
      )
      const { fork } = await plug(plugin, config)
      assert.match(String(fork.error?.message), message)
    }
    assert.throws(() => manifest.config({ patterns: [{ name: 'Bad Name', pattern: 'x' }] }))
    assert.throws(() => manifest.config({ detectors: { card: { stages: ['output'] } } } as never))
  })

  it('refuses a pattern the linear-time engine cannot run, or that matches the empty string, in the schema, naming its path', () => {
    const NoBacktracking =
      /\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process\)/
    for (const [pattern, message] of [
      ['T-(\\d+', /\/T-\(\\d\+\/ is not a valid regular expression: missing closing \)/],
      ['(?=x)y', NoBacktracking],
      ['(?<!x)y', NoBacktracking],
      ['(a)\\1', NoBacktracking],
      ['x*', /\/x\*\/ matches the empty string, so it would match everywhere/],
    ] as [string, RegExp][]) {
      assert.throws(
        () => manifest.config({ patterns: [{ name: 'ticket', pattern }] }),
        (error: Error) => {
          assert.ok(error.message.startsWith('$.patterns[0].pattern pattern "ticket": '), error.message)
          assert.match(error.message, message)
          return true
        },
      )
      // A config that did not come through the schema is checked when the plugin starts.
      const unchecked = { ...manifest.config({}), patterns: [{ name: 'ticket', pattern, stages: ['answer'], action: 'redact' }] } as Config
      assert.throws(
        () => checkConfig(unchecked),
        (error: CordageError) =>
          error.code === 'plugin_config_invalid' &&
          error.message.startsWith('guardrails: pattern "ticket": ') &&
          message.test(error.message),
      )
    }
    assert.throws(() => manifest.config({ patterns: [{ name: 'ticket', pattern: 'T-\\d+', flags: 'g' }] }), /\$\.patterns\[0\]\.flags/)
  })

  it('is refused through the host with plugin_config_invalid, before any run, at the line of the key', async () => {
    await assert.rejects(
      supportDesk({ script: [], plugins: [entry({ patterns: [{ name: 'ticket', pattern: '(' }] })] }),
      (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(
          error.message,
          /preset\.yml:\d+:\d+ agents\.support\.plugins\[\d+\]\.config\.patterns\[0\]\.pattern: plugin guardrails@1\.0\.0: pattern "ticket": \/\(\/ is not a valid regular expression/,
        )
        return true
      },
    )
    await assert.rejects(
      supportDesk({
        script: [],
        plugins: [
          entry({
            patterns: [
              { name: 'ok', pattern: 'x' },
              { name: 'ahead', pattern: 'secret(?=:)' },
            ],
          }),
        ],
      }),
      (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(
          error.message,
          /config\.patterns\[1\]\.pattern: plugin guardrails@1\.0\.0: pattern "ahead": .*lookahead, lookbehind and backreferences are not supported/,
        )
        return true
      },
    )
    await assert.rejects(supportDesk({ script: [], plugins: [entry({ detectors: { emial: true } })] }), (error: CordageError) => {
      assert.equal(error.code, 'plugin_config_invalid')
      assert.match(error.message, /no config key "emial"/)
      return true
    })
  })

  it('runs a custom pattern in time linear in the text, however the pattern is written', { timeout: 20_000 }, () => {
    // On a backtracking engine each of these takes longer than the universe has left.
    const g = guardrails({
      patterns: [
        { name: 'nested', pattern: '^(a+)+$', stages: ['tool_output', 'answer'] },
        { name: 'overlapping', pattern: '(x+x+)+y', stages: ['tool_output', 'answer'] },
      ],
    })
    assert.deepEqual(g.check(input('tool_output', 'a'.repeat(50_000) + 'b')), { action: 'pass' })
    assert.deepEqual(g.check(input('tool_output', 'x'.repeat(50_000))), { action: 'pass' })
    assert.deepEqual(g.check(input('tool_input', { note: 'a'.repeat(50_000) + 'b', other: 'x'.repeat(50_000) })), { action: 'pass' })
    // And they still match what they match.
    assert.deepEqual(g.check(input('answer', 'a'.repeat(50_000))), {
      action: 'redact',
      guard: 'nested',
      reason: 'redacted 1 nested in the answer',
      text: '[redacted:nested]',
    })
    assert.deepEqual(g.check(input('answer', `ok ${'x'.repeat(50_000)}y`)), {
      action: 'redact',
      guard: 'overlapping',
      reason: 'redacted 1 overlapping in the answer',
      text: 'ok [redacted:overlapping]',
    })
  })

  it('keeps the flags of a custom pattern', () => {
    const g = guardrails({ patterns: [{ name: 'order-id', pattern: 'ord-\\d{6}$', flags: 'im', stages: ['answer'] }] })
    assert.deepEqual(g.check(input('answer', 'Your ORD-123456\nthanks')), {
      action: 'redact',
      guard: 'order-id',
      reason: 'redacted 1 order-id in the answer',
      text: 'Your [redacted:order-id]\nthanks',
    })
    assert.deepEqual(
      guardrails({ patterns: [{ name: 'order-id', pattern: 'ord-\\d{6}$', stages: ['answer'] }] }).check(
        input('answer', 'Your ORD-123456\nthanks'),
      ),
      { action: 'pass' },
    )
  })
})

describe('guardrails in a run', () => {
  it('blocks a call whose arguments hold a secret: nothing runs, the model is told, the run goes on', async () => {
    const note = `Customer pasted their token ${GithubToken} by mistake`
    const script = [{ tool: 'record_followup', args: { ticketId: 'T-1001', note } }, lookup, { final: refundAnswer }]
    const desk = await supportDesk({ script, plugins: [entry()] })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await desk.events(state.runId)
      assert.deepEqual(
        events.filter((e) => e.actionId === 's1.a1').map((e) => e.type),
        ['tool/proposed', 'guard/tripped', 'tool/error'],
      )
      const [trip] = trips(events)
      assert.deepEqual(trip.data, {
        stage: 'tool_input',
        guard: 'secrets',
        action: 'block',
        reason: 'found 1 secret (github token) in the arguments (note)',
        guardVersion: readService<GuardrailService>(desk.agent.ctx, 'guardrail')!.value.version,
      })
      assert.equal(trip.producer, 'guardrails@1.0.0')
      const [error] = ofType(events, 'tool/error', 's1.a1')
      assert.equal(error.data.code, 'guardrail_blocked')
      assert.equal(error.causation, trip.seq)
      assert.match(
        error.data.observation,
        /^Blocked by guardrail secrets: found 1 secret \(github token\) in the arguments \(note\)\. Nothing was run\.$/,
      )
      // Not before policy, not run: no decision, no start, nothing in the outbox.
      assert.equal(ofType(events, 'tool/decision', 's1.a1').length, 0)
      assert.equal(ofType(events, 'tool/start', 's1.a1').length, 0)
      assert.deepEqual(desk.followups(), [])
      assert.match(desk.model().requests[1].messages.at(-1)!.text, /Blocked by guardrail secrets/)
      // What the guardrail and the kernel wrote about it does not repeat the secret.
      for (const e of [trip, error]) assert.ok(!JSON.stringify(e).includes(GithubToken))
    } finally {
      await desk.stop()
    }
  })

  it('redacts a tool result before the model sees it; the stored output is the redacted one too', async () => {
    const script = [{ tool: 'customer_profile', args: { customerId: 'C-42' } }, lookup, { final: refundAnswer }]
    const desk = await supportDesk({ script, plugins: [customerDesk, entry({ detectors: { email: true } })] })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await desk.events(state.runId)
      assert.deepEqual(
        events.filter((e) => e.actionId === 's1.a1').map((e) => e.type),
        ['tool/proposed', 'tool/decision', 'tool/start', 'guard/tripped', 'tool/end'],
      )
      const [trip] = trips(events)
      assert.deepEqual(
        [trip.data.stage, trip.data.action, trip.data.guard, trip.data.reason],
        ['tool_output', 'redact', 'card,email', 'redacted 1 card, 1 email in the result of customer_profile'],
      )
      const [end] = ofType(events, 'tool/end', 's1.a1')
      assert.match(end.data.observation, /"email":"\[redacted:email\]","card":"\[redacted:card\]"/)
      // Redacted for people too (docs/concepts/artifacts.md): the stored output is what the guardrail let
      // through, in the result's own shape, and without audit.keepRedacted the raw one is not kept at all.
      assert.deepEqual(end.data.output, JSON.parse(end.data.observation))
      assert.deepEqual(end.data.redacted, { guard: 'card,email' })
      for (const raw of [Customer.email, Customer.card]) assert.ok(!JSON.stringify(events).includes(raw), `an event holds ${raw}`)
      const seen = JSON.stringify(desk.model().requests[1].messages)
      assert.match(seen, /\[redacted:email\]/)
      for (const raw of [Customer.email, Customer.card]) {
        assert.ok(!seen.includes(raw), `the model was shown ${raw}`)
        assert.ok(!JSON.stringify(state.transcript).includes(raw), `the transcript holds ${raw}`)
        assert.ok(!JSON.stringify(trip).includes(raw))
      }
    } finally {
      await desk.stop()
    }
  })

  it('redacts a final answer before verification: the verified and returned answer is the clean one', async () => {
    const script = [lookup, { final: `${refundAnswer} It goes back to card ${Visa}.` }]
    const desk = await supportDesk({ script, plugins: [entry()] })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const clean = `${refundAnswer} It goes back to card [redacted:card].`
      assert.equal(state.answer, clean)
      const events = await desk.events(state.runId)
      const types = events.map((e) => e.type)
      assert.deepEqual(types.slice(types.indexOf('step/model-response', 10), types.indexOf('verify/end') + 1), [
        'step/model-response',
        'guard/tripped',
        'verify/start',
        'verify/end',
      ])
      const [trip] = trips(events)
      assert.deepEqual([trip.data.stage, trip.data.action, trip.data.reason], ['answer', 'redact', 'redacted 1 card in the answer'])
      assert.equal(trip.actionId, undefined)
      assert.equal(ofType(events, 'verify/start')[0].data.answer, clean)
      assert.equal(ofType(events, 'verify/end')[0].data.ok, true)
      assert.equal(ofType(events, 'run/end')[0].data.answer, clean)
      assert.equal(ofType(events, 'turn/end')[0].data.answer, clean)
    } finally {
      await desk.stop()
    }
  })

  it('blocks an answer: verify/end guardrail_blocked with feedback, the model answers again and completes', async () => {
    const script = [lookup, { final: `${refundAnswer} Use the API key ${OpenAiKey} to check.` }, { final: refundAnswer }]
    const desk = await supportDesk({
      script,
      budgets: { maxRepairs: 1 },
      plugins: [entry({ detectors: { secrets: { action: 'block' } } })],
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      assert.equal(state.answer, refundAnswer)
      const events = await desk.events(state.runId)
      const [trip] = trips(events)
      assert.deepEqual([trip.data.stage, trip.data.action, trip.data.guard], ['answer', 'block', 'secrets'])
      const [blocked, passed] = ofType(events, 'verify/end')
      assert.deepEqual(blocked.data, {
        ok: false,
        code: 'guardrail_blocked',
        reason: 'found 1 secret (sk- api key) in the answer',
        repair: true,
        evidence: [],
        feedback:
          'Your answer was blocked by guardrail secrets: found 1 secret (sk- api key) in the answer. Answer again without that content.',
      })
      assert.equal(blocked.producer, 'guardrails@1.0.0')
      assert.equal(passed.data.ok, true)
      assert.match(JSON.stringify(desk.model().requests[2].messages.at(-1)), /blocked by guardrail secrets/)
    } finally {
      await desk.stop()
    }
  })

  it('ends FAILED_VERIFICATION guardrail_blocked when a blocked answer has no repair left', async () => {
    const desk = await supportDesk({
      script: [lookup, { final: `${refundAnswer} ${OpenAiKey}` }],
      plugins: [entry({ detectors: { secrets: { action: 'block' } } })],
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'FAILED_VERIFICATION')
      assert.equal(state.failureCode, 'guardrail_blocked')
      assert.ok(!(state.reason ?? '').includes(OpenAiKey))
    } finally {
      await desk.stop()
    }
  })

  it('fails closed: a guardrail that throws blocks, and the run goes on', async () => {
    const desk = await supportDesk({ script: [lookup, lookup, { final: refundAnswer }], plugins: [entry()] })
    try {
      const service = readService<GuardrailService>(desk.agent.ctx, 'guardrail')!.value
      const check = service.check.bind(service)
      let thrown = 0
      service.check = (i) => {
        if (i.stage === 'tool_input' && thrown++ === 0) throw new Error('detector crashed')
        return check(i)
      }
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await desk.events(state.runId)
      assert.deepEqual(
        events.filter((e) => e.actionId === 's1.a1').map((e) => e.type),
        ['tool/proposed', 'guard/tripped', 'tool/error'],
      )
      const [trip] = trips(events)
      assert.deepEqual([trip.data.stage, trip.data.action, trip.data.guard], ['tool_input', 'block', 'guardrail-error'])
      assert.match(trip.data.reason, /guardrail guardrails@1\.0\.0 failed, blocked to fail closed: detector crashed/)
      assert.equal(ofType(events, 'tool/error', 's1.a1')[0].data.code, 'guardrail_blocked')
      assert.equal(ofType(events, 'tool/start', 's2.a1').length, 1)
    } finally {
      await desk.stop()
    }
  })

  it('without the plugin, the same scenarios run as before: no guard events, nothing changed', async () => {
    const note = `Customer pasted their token ${GithubToken} by mistake`
    const followup = await supportDesk({ script: [{ tool: 'record_followup', args: { ticketId: 'T-1001', note } }] })
    try {
      const state = await followup.agent.run()
      assert.equal(state.status, 'WAITING_APPROVAL', 'policy decides, as it always did')
      const events = await followup.events(state.runId)
      assert.equal(trips(events).length, 0)
      assert.equal(ofType(events, 'tool/decision', 's1.a1')[0].data.verdict, 'ask')
    } finally {
      await followup.stop()
    }
    const script = [{ tool: 'customer_profile', args: { customerId: 'C-42' } }, lookup, { final: `${refundAnswer} Card ${Visa}.` }]
    const plain = await supportDesk({ script, plugins: [customerDesk] })
    try {
      const state = await plain.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await plain.events(state.runId)
      assert.equal(trips(events).length, 0)
      assert.ok(ofType(events, 'tool/end', 's1.a1')[0].data.observation.includes(Customer.email))
      assert.equal(state.answer, `${refundAnswer} Card ${Visa}.`)
      assert.ok(!('guardrail' in (ofType(events, 'run/start')[0].data.services as Record<string, string>)))
    } finally {
      await plain.stop()
    }
  })

  it('takes a new config by swap between runs, under a new version', async () => {
    const script = [{ tool: 'customer_profile', args: { customerId: 'C-42' } }, lookup, { final: refundAnswer }]
    const desk = await supportDesk({ script, plugins: [customerDesk, entry()] })
    try {
      const first = await desk.agent.run()
      const before = trips(await desk.events(first.runId))
      assert.deepEqual(
        before.map((t) => t.data.guard),
        ['card'],
      )
      await desk.app.swap('support', 'guardrails', { config: { detectors: { card: false, email: true } } })
      const second = await desk.agent.run()
      const after = trips(await desk.events(second.runId))
      assert.deepEqual(
        after.map((t) => t.data.guard),
        ['email'],
      )
      assert.notEqual(after[0].data.guardVersion, before[0].data.guardVersion)
    } finally {
      await desk.stop()
    }
  })
})

describe('guardrails docs', () => {
  const examples = [
    ['README.md', readFileSync(new URL('../README.md', import.meta.url), 'utf8')],
    ['docs/concepts/guardrails.md', readFileSync(new URL('../../../docs/concepts/guardrails.md', import.meta.url), 'utf8')],
  ] as const

  for (const [file, text] of examples) {
    it(`runs the ${file} example as written`, async () => {
      const yaml = /```yaml\n([\s\S]*?)```/.exec(text)![1]
      const example = parse(yaml).plugins[0]
      assert.equal(example.plugin, 'guardrails')
      const script = [
        { tool: 'record_followup', args: { ticketId: 'T-1001', note: `key ${OpenAiKey}` } },
        lookup,
        { final: `${refundAnswer} Reach Dana at dana.reyes@example.com about ORD-123456.` },
      ]
      const desk = await supportDesk({ script, plugins: [example] })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const events = await desk.events(state.runId)
        assert.equal(ofType(events, 'tool/error', 's1.a1')[0].data.code, 'guardrail_blocked')
        // The support desk has no vault tool; its exemption is in force all the same.
        const service = readService<GuardrailService>(desk.agent.ctx, 'guardrail')!.value
        assert.deepEqual(await service.check(input('tool_input', { secret: OpenAiKey }, 'vault_put')), { action: 'pass' })
        assert.equal(state.answer, `${refundAnswer} Reach Dana at [redacted:email] about [order id].`)
      } finally {
        await desk.stop()
      }
    })
  }
})
