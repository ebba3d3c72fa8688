/**
 * Many runs killed (SIGKILL) at random durable events and resumed in new processes, again and again,
 * until they end. Only idempotent side effects are used, so every run must complete, and: no effect is
 * done twice under one key, no committed effect is lost, every log is gap-free, every run ends in a
 * valid status. Seeded (CORDAGE_SEED) so a failure can be replayed; CORDAGE_RANDOM_RUNS sets the size.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, wellFormed } from './fault-lab.ts'

const seed = Number(process.env.CORDAGE_SEED ?? 20261129)
const lanes = 4
const runsPerLane = Number(process.env.CORDAGE_RANDOM_RUNS ?? 16) / lanes

/** mulberry32: small, seedable, good enough to pick crash points. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function script(rand: () => number, lane: number) {
  const steps: unknown[] = []
  const n = 3 + Math.floor(rand() * 4)
  for (let i = 0; i < n; i++) {
    const pick = rand()
    if (pick < 0.3) steps.push({ tool: 'lookup', args: {} })
    else if (pick < 0.65) steps.push({ tool: 'pay_idempotent', args: { amount: i + 1 } })
    else if (pick < 0.85) steps.push({ tool: 'refund', args: { order: `L${lane}-${i}`, amount: i + 1 } })
    else
      steps.push({
        calls: [
          { tool: 'pay_idempotent', args: { amount: 100 + i } },
          { tool: 'lookup', args: {} },
        ],
      })
  }
  steps.push({ final: 'done' })
  return steps
}

describe('randomized crashes', () => {
  it(`keeps effects exactly once and logs whole across random SIGKILLs (seed ${seed})`, async () => {
    const rand = random(seed)
    const stats = { runs: 0, kills: 0, resumes: 0, effects: 0, deduplicated: 0 }
    const killPoint = () => (rand() < 0.75 ? `kill-after-any=${1 + Math.floor(rand() * 30)}` : undefined)

    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const lab = new FaultLab({ script: script(rand, lane), durability: { leaseTtlMs: 250 } })
        try {
          for (let r = 0; r < runsPerLane; r++) {
            const known = new Set((await lab.db().list({ limit: 1000 })).map((r) => r.runId))
            let exit = await lab.run(['run', '--json'], killPoint())
            // A process killed early may not have printed the run id: the store has the run.
            const runId = (await lab.db().list({ limit: 1000 })).map((r) => r.runId).find((id) => !known.has(id))!
            assert.ok(runId, `the run was not even recorded (exit ${exit.code} ${exit.signal}): ${exit.stderr}`)
            stats.runs++
            for (let attempt = 0; exit.signal === 'SIGKILL'; attempt++) {
              assert.ok(attempt < 12, `run ${runId} did not finish after ${attempt} resumes (seed ${seed})`)
              stats.kills++
              await lab.leaseExpiry()
              exit = await lab.run(['resume', runId, '--json'], killPoint())
              stats.resumes++
            }
            const events = await lab.events(runId)
            assertRun(events, runId, exit.code, exit.stderr)
            stats.effects += events.filter((e) => e.type === 'tool/end' && e.data.tool !== 'lookup').length
            stats.deduplicated += events.filter((e) => e.type === 'tool/end' && e.data.deduplicated).length
          }
          // The payment system saw each key at most once, and every committed effect is there.
          const payments = lab.payments()
          const keys = payments.map((p) => p.key)
          assert.equal(new Set(keys).size, keys.length, `a key was paid twice (seed ${seed}): ${keys.join(' ')}`)
          for (const id of (await lab.db().list({ limit: 1000 })).map((r) => r.runId)) {
            for (const e of await lab.events(id)) {
              if (e.type === 'tool/start' && e.data.tool !== 'lookup' && !keys.includes(e.data.idempotencyKey)) {
                // A call that started may have been killed before it paid; then a later attempt must have.
                const later = (await lab.events(id)).some((x) => x.type === 'tool/end' && x.actionId === e.actionId)
                assert.ok(!later, `run ${id} ${e.actionId} ended without its payment being in the payment system`)
              }
            }
          }
        } finally {
          lab.close()
        }
      }),
    )
    console.log(
      `randomized crashes (seed ${seed}): ${stats.runs} runs, ${stats.kills} SIGKILLs, ${stats.resumes} resumes, ${stats.effects} effects recorded (${stats.deduplicated} deduplicated), 0 duplicates`,
    )
    assert.ok(stats.kills > stats.runs / 2, 'the test killed processes often enough to mean something')
  })
})

function assertRun(events: RunEvent[], runId: string, code: number | null, stderr: string) {
  assert.equal(wellFormed(events), undefined, `run ${runId}: ${wellFormed(events)}`)
  const end = events.at(-1)!
  assert.ok(end.type === 'run/end', `run ${runId} did not end (exit ${code}): ${stderr}`)
  assert.equal(
    end.data.status,
    'COMPLETED',
    `run ${runId} ended ${end.data.status} ${end.data.failureCode ?? ''}: ${end.data.reason ?? ''}\n${events.map((e) => `${e.seq}:${e.type}:${e.stepId ?? ''}:${e.actionId ?? ''}`).join(' ')}`,
  )
  for (const proposed of events.filter((e) => e.type === 'tool/proposed')) {
    const closing = events.filter(
      (e) =>
        e.actionId === proposed.actionId && (e.type === 'tool/end' || (e.type === 'tool/error' && !e.data.willRetry && !e.data.unknown)),
    )
    assert.equal(closing.length, 1, `run ${runId} action ${proposed.actionId} closed ${closing.length} times`)
  }
}
