/**
 * The pure parts of mcp-tools, each on its own: argument checks from JSON Schema, contracts from the
 * preset, registry names, results, secrets.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { contractOf } from '../contract.ts'
import { isValidName, registryName } from '../naming.ts'
import { StderrTail } from '../stderr-tail.ts'
import { toToolResult } from '../result.ts'
import { argumentCheck } from '../schema.ts'
import { Secrets } from '../secrets.ts'

const keep = <T>(value: T) => value
const ok = (schema: Record<string, unknown>, value: unknown) => argumentCheck(schema).schema.safeParse(value).success

describe('argument checks from JSON Schema', () => {
  it('checks types, patterns, required fields and additionalProperties, and lets unknown keys through otherwise', () => {
    const schema = {
      type: 'object',
      properties: { orderId: { type: 'string', pattern: '^O-\\d+$' }, qty: { type: 'integer', minimum: 1 } },
      required: ['orderId'],
    }
    assert.equal(ok(schema, { orderId: 'O-1', qty: 2 }), true)
    assert.equal(ok(schema, { orderId: 'O-1', note: 'kept' }), true)
    assert.equal(ok(schema, { orderId: 'X-1' }), false)
    assert.equal(ok(schema, { qty: 2 }), false)
    assert.equal(ok(schema, { orderId: 'O-1', qty: 0 }), false)
    assert.equal(ok({ ...schema, additionalProperties: false }, { orderId: 'O-1', note: 'no' }), false)
  })

  it('treats missing arguments as an empty object', () => {
    assert.equal(ok({ type: 'object' }, undefined), true)
    assert.equal(ok({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, undefined), false)
  })

  it('follows draft-07 `definitions` references', () => {
    const schema = { type: 'object', properties: { n: { $ref: '#/definitions/N' } }, definitions: { N: { type: 'integer' } } }
    const { degraded } = argumentCheck(schema)
    assert.equal(degraded, undefined)
    assert.equal(ok(schema, { n: 3 }), true)
    assert.equal(ok(schema, { n: 'three' }), false)
  })

  it('degrades property by property when zod cannot convert the whole schema, and says why', () => {
    const schema = {
      type: 'object',
      properties: { kind: { type: 'string', enum: ['refund', 'note'] }, rule: { not: { type: 'string' } }, amount: { type: 'number' } },
      required: ['kind', 'rule'],
      if: { properties: { kind: { const: 'refund' } } },
      then: { required: ['amount'] },
    }
    const { degraded } = argumentCheck(schema)
    assert.match(degraded!, /not supported/)
    assert.equal(ok(schema, { kind: 'refund', rule: 1, amount: 5 }), true)
    assert.equal(ok(schema, { kind: 'other', rule: 1 }), false, 'convertible properties are still checked')
    assert.equal(ok(schema, { kind: 'note' }), false, 'an unconvertible required property must still be there')
    assert.equal(ok(schema, { kind: 'note', rule: 1, amount: 'x' }), false)
  })
})

describe('contracts from the preset', () => {
  it('defaults every MCP tool to an external, non-idempotent effect that wants approval', () => {
    assert.deepEqual(contractOf({}), { sideEffect: 'external', idempotent: false, needsApproval: true, timeoutMs: 30_000, retries: 0 })
  })

  it("lets a tool's own entry win over the server defaults, field by field", () => {
    assert.deepEqual(contractOf({ sideEffect: 'local', timeoutMs: 5000 }, { idempotent: true }), {
      sideEffect: 'local',
      idempotent: true,
      needsApproval: true,
      timeoutMs: 5000,
      retries: 0,
    })
  })

  it('makes a tool declared read-only idempotent and approval-free unless told otherwise', () => {
    assert.deepEqual(contractOf({}, { sideEffect: 'none' }), {
      sideEffect: 'none',
      idempotent: true,
      needsApproval: false,
      timeoutMs: 30_000,
      retries: 0,
    })
    assert.equal(contractOf({ needsApproval: true }, { sideEffect: 'none' }).needsApproval, true)
  })
})

describe('registry names', () => {
  it('namespaces, replaces characters tool names may not have, and takes a rename', () => {
    assert.equal(registryName('orders', 'lookup_order'), 'orders__lookup_order')
    assert.equal(registryName('orders', 'get.status/v2'), 'orders__get_status_v2')
    assert.equal(registryName('orders', 'get.status', 'health'), 'orders__health')
    assert.equal(isValidName(registryName('orders', 'x'.repeat(56))), true)
    assert.equal(isValidName(registryName('orders', 'x'.repeat(57))), false)
  })
})

describe('results', () => {
  it('keeps structured content as output and the text for the model', () => {
    const result = toToolResult({ content: [{ type: 'text', text: 'two items' }], structuredContent: { items: 2 } }, 't', keep)
    assert.deepEqual(result, { output: { items: 2 }, observation: 'two items' })
  })

  it('names parts that are not text', () => {
    const result = toToolResult(
      {
        content: [
          { type: 'audio', data: 'AA==', mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'file:///r.txt', name: 'report' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inline text' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/octet-stream', blob: 'AA==' } },
        ],
      },
      't',
      keep,
    )
    assert.equal(
      result.observation,
      '[audio audio/wav]\n[resource file:///r.txt "report"]\ninline text\n[resource file:///b.bin application/octet-stream]',
    )
  })

  it("turns isError into tool_failed with the server's text", () => {
    assert.throws(() => toToolResult({ content: [{ type: 'text', text: 'locked' }], isError: true }, 't', keep), {
      code: 'tool_failed',
      message: 'locked',
    })
    assert.throws(() => toToolResult({ isError: true }, 'refund', keep), {
      code: 'tool_failed',
      message: 'refund reported an error without saying why',
    })
  })
})

describe('secrets', () => {
  it('expands ${VAR} from the environment, reports what is missing, and redacts what it read', () => {
    const secrets = new Secrets({ TOKEN: 'abc-123-secret', PORT: '80' })
    const missing: string[] = []
    assert.equal(secrets.expand('Bearer ${TOKEN}', missing), 'Bearer abc-123-secret')
    assert.equal(secrets.expand('http://h:${PORT}/${NOPE}', missing), 'http://h:80/')
    assert.deepEqual(missing, ['NOPE'])
    assert.equal(secrets.redact('sent abc-123-secret to h:80'), 'sent [redacted] to h:80', 'values too short to be secrets are left alone')
    assert.deepEqual(secrets.redactDeep({ a: ['x abc-123-secret'], n: 1 }), { a: ['x [redacted]'], n: 1 })
  })
})

describe('stderr tail', () => {
  it('keeps the first error line when a long stack trace pushes it out of the last lines', () => {
    const tail = new StderrTail()
    tail.push("node:internal/modules/run_main:123\nError [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk'\n")
    for (let i = 0; i < 12; i++) tail.push(`    at frame${i} (node:internal/x:${i})\n`)
    const shown = tail.lines()
    assert.match(shown, /^Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package '@modelcontextprotocol\/sdk'\n\.\.\.\n {4}at frame4/)
    assert.equal(shown.split('\n').length, 10)
  })

  it('shows the last lines alone when they hold the error', () => {
    const tail = new StderrTail()
    tail.push('starting\nError: database is locked\n')
    assert.equal(tail.lines(), 'starting\nError: database is locked')
  })
})
