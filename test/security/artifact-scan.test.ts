/**
 * `cordage scan` searches the artifacts of every run too, audit-only ones included, on store-sqlite and
 * store-postgres. The secrets reach the artifacts as they would in a store written before the preset
 * listed them: the runs are made with the variables unset (nothing to scrub), and scanned with them
 * set. The vault export (a ui artifact) holds the token in every form the scrubber knows, and no event
 * holds it in any; the raw customer record (an audit-only artifact) holds the card number, which the
 * guardrail redacted from every event. A finding names the run, the artifact, the event that names it
 * and where inside it, never the value.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { IntegrityLab, storeKinds } from './integrity-lab.ts'
import { vaultPreset } from './vault-preset.ts'

// Its base64 holds a "+", so base64url is a form of its own; "?", ">" and "~" make percent-encoding differ.
const token = 'vault>key?Tok3n~9'
const card = '4111 1111 1111 1111'
const forms: [string, string][] = [
  ['as written', token],
  ['base64', Buffer.from(token).toString('base64')],
  ['base64url', Buffer.from(token).toString('base64url')],
  ['hex', Buffer.from(token).toString('hex')],
  ['percent-encoded', encodeURIComponent(token)],
]

const labs: IntegrityLab[] = []
after(async () => {
  for (const lab of labs) await lab.close()
})

for (const { kind, skip } of storeKinds) {
  describe(`cordage scan and the artifacts of runs (store-${kind})`, { skip }, () => {
    it('finds a secret in a ui artifact in every form, and in an audit-only one, naming where (exit 1)', async () => {
      const lab = new IntegrityLab(kind)
      labs.push(lab)
      lab.writePreset(vaultPreset(lab, { secrets: ['VAULT_TOKEN', 'CARD_NO'], lines: forms.map(([, text]) => `key: ${text}`) }))
      const run = await lab.run([], { VAULT_TOKEN: undefined, CARD_NO: undefined })
      assert.equal(run.code, 0, run.stderr)
      const log = JSON.stringify(run.events)
      for (const [form, text] of [...forms, ['card', card]]) assert.ok(!log.includes(text), `no event holds the ${form} form`)
      const ends = run.events.filter((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')
      const exported = ends.find((e) => e.data.artifact)!
      const redacted = ends.find((e) => e.data.redacted?.audit)!
      const ui = exported.data.artifact!.ref
      const audit = redacted.data.redacted!.audit!.ref

      const env = { VAULT_TOKEN: token, CARD_NO: card }
      const result = await lab.cli(['scan'], env)
      assert.equal(result.code, 1, result.stderr)
      const offset = Buffer.byteLength(`Customer C-9: Grace Hopper, card `)
      assert.deepEqual(
        result.stdout.split('\n').sort(),
        [
          ...forms.map(
            ([form], i) =>
              `run ${run.runId} artifact ${ui} (tool/end of ${exported.actionId} at seq ${exported.seq}) $.lines[${i}]: VAULT_TOKEN (${form})`,
          ),
          `run ${run.runId} artifact ${audit} (audit-only; tool/end of ${redacted.actionId} at seq ${redacted.seq}) $ at byte ${offset}: CARD_NO (as written)`,
        ].sort(),
      )
      assert.match(result.stderr, /1 run\(s\) \(\d+ events, 0 snapshot\(s\), 0 ledger entries, 2 artifact\(s\)\)/)
      assert.match(result.stderr, /6 finding\(s\)/)
      assert.ok(!result.stdout.includes(token) && !result.stderr.includes(token), 'the value is never printed')

      const json = await lab.cli(['scan', '--json'], env)
      assert.equal(json.code, 1)
      const findings = json.stdout.split('\n').map((l) => JSON.parse(l))
      assert.deepEqual(
        findings.find((f) => f.ref === audit),
        {
          runId: run.runId,
          in: 'artifact',
          ref: audit,
          visibility: 'audit',
          actionId: redacted.actionId,
          seq: redacted.seq,
          type: 'tool/end',
          path: '$',
          offset,
          secret: 'CARD_NO',
          form: 'as written',
        },
      )
    })

    it('finds nothing in artifacts that hold no secret (exit 0)', async () => {
      const lab = new IntegrityLab(kind)
      labs.push(lab)
      lab.writePreset(vaultPreset(lab, { secrets: ['VAULT_TOKEN'] }))
      const run = await lab.run([], { VAULT_TOKEN: undefined })
      assert.equal(run.code, 0, run.stderr)
      const result = await lab.cli(['scan'], { VAULT_TOKEN: token })
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /2 artifact\(s\)\) and 0 grant\(s\) .* for 1 secret\(s\): VAULT_TOKEN; none found/)
    })
  })
}
