/**
 * `onDrift: pin` on a worker (core/kernel/agent.ts driveNext, core/host/app.ts forRun and plugAgent):
 * a run submitted under policy-rules 1.0.0 and driven by a worker whose preset now names ^2.0.0 runs on
 * 1.0.0, as a resume would; the runtime pinned for it is released when the run ends, so a process that
 * drives a thousand such runs keeps none of them (and its heap stays flat).
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { after, afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { main } from '../core/cli/main.ts'
import type { Cordage } from '../core/host/app.ts'
import { refundAnswer } from './helpers.ts'
import { open, removeDirs, scratchDir, stopApps } from './sqlite-preset.ts'

after(removeDirs)
afterEach(stopApps)

const rules = [{ id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }]

/** desk.yml: one agent on runs.db whose policy-rules entry is `policy` (a range, onDrift). */
function writePreset(dir: string, policy: Record<string, unknown>, script: unknown[]): string {
  const file = join(dir, 'desk.yml')
  writeFileSync(
    file,
    stringify({
      agents: {
        support: {
          task: 'Tell me the refund window',
          budgets: { maxSteps: 4 },
          model: { plugin: 'model-scripted', config: { script } },
          plugins: [
            { plugin: 'store-sqlite', config: { path: 'runs.db' } },
            'tools-registry',
            'context-basic',
            { plugin: 'verifier-basic', config: { minCount: 0 } },
            { plugin: 'policy-rules', config: { default: 'deny', rules }, ...policy },
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
          ],
        },
      },
    }),
  )
  return file
}

/** Submit `count` runs under policy-rules 1.0.0 (recorded in their run/start), then set the preset to ^2.0.0, onDrift: pin. */
async function submittedUnderV1(dir: string, count: number, script: unknown[]): Promise<string[]> {
  const v1 = await open(writePreset(dir, { version: '^1.0.0' }, script))
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push(await v1.agent('support').submit())
  await v1.stop()
  writePreset(dir, { version: '^2.0.0', onDrift: 'pin' }, script)
  return ids
}

/** Every pinned runtime's release runs on the turn after its run ends. */
const nextTurn = () => new Promise((r) => setImmediate(r))

describe('a worker honours onDrift: pin', () => {
  it('drives a submitted run on the recorded policy-rules 1.0.0, records the pin, and releases the pinned runtime', async () => {
    const dir = scratchDir()
    const script = [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }]
    const [runId] = await submittedUnderV1(dir, 1, script)
    const app = await open(join(dir, 'desk.yml'))
    assert.equal(app.pluginsOf('support')['policy-rules'], '2.1.0', 'the agent itself runs 2.1.0')
    const handle = await app.agent('support').driveNext()
    assert.equal(handle?.runId, runId)
    const state = await handle!.done
    // Before: the worker's runtime (2.0.0) refused the drift and suspended the run.
    assert.equal(state.status, 'COMPLETED', `${state.status} (${state.failureCode}): ${state.reason}`)
    const events = await app.agent('support').store().load(runId)
    const drift = events.find((e): e is RunEvent<'run/version-drift'> => e.type === 'run/version-drift')
    assert.equal(drift?.data.decision, 'pinned')
    const producers = events.filter((e) => e.type === 'tool/decision').map((e) => e.producer)
    assert.deepEqual(producers, ['policy-rules@1.0.0'])
    await nextTurn()
    assert.equal(app.pinnedRuntimes(), 0, 'the runtime pinned for the run was released when it ended')
  })

  it('`cordage worker --once` drives it pinned and says how many pinned runtimes are still loaded (none)', async () => {
    const dir = scratchDir()
    const [runId] = await submittedUnderV1(dir, 1, [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }])
    const err: string[] = []
    const code = await main(['worker', '--once', '--preset', join(dir, 'desk.yml')], { out: () => {}, err: (l) => err.push(l) })
    assert.equal(code, 0, err.join('\n'))
    assert.ok(err.includes(`run ${runId} COMPLETED`), err.join('\n'))
    assert.match(err.at(-1)!, /drove 1 run\(s\); 0 pinned runtime\(s\) loaded$/)
  })

  it('a thousand pinned runs in one process: none stays loaded after its run, and the heap stays flat', async (t) => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const heap = async () => {
      await nextTurn()
      for (let i = 0; i < 3; i++) gc()
      return process.memoryUsage().heapUsed
    }
    const dir = scratchDir()
    const total = 1000
    await submittedUnderV1(dir, total, [{ final: 'The refund window is 30 days.' }])
    const app: Cordage = await open(join(dir, 'desk.yml'))
    const worker = app.agent('support')
    const seen: Record<number, number> = {}
    let alive = 0
    for (let n = 1; n <= total; n++) {
      const handle = await worker.driveNext()
      assert.ok(handle, `run ${n} of ${total} was not claimed`)
      const state = await handle.done
      assert.equal(state.status, 'COMPLETED', `run ${n}: ${state.status} (${state.failureCode}): ${state.reason}`)
      await nextTurn()
      alive = Math.max(alive, app.pinnedRuntimes())
      if (n === 100 || n === 200 || n === total) seen[n] = await heap()
    }
    assert.equal(await worker.driveNext(), undefined, 'every run was driven')
    assert.equal(alive, 0, 'a pinned runtime outlived its run')
    const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`
    const growth = (seen[total] - seen[200]) / seen[200]
    // A runtime kept per run (six plugins, a SQLite connection, cordis contexts) grows the heap by far
    // more than this over 800 runs; what is left is the store's and V8's own noise.
    assert.ok(
      growth < 0.25,
      `heap after GC: ${mb(seen[100])} at 100 runs, ${mb(seen[200])} at 200, ${mb(seen[total])} at ${total} (+${(growth * 100).toFixed(0)}% from 200)`,
    )
    t.diagnostic(`heap after GC: 100 runs ${mb(seen[100])}, 200 runs ${mb(seen[200])}, ${total} runs ${mb(seen[total])}`)
  })
})
