/**
 * Cancellation reaches everything a run started: the tool's child process and its children (killed by
 * process group), and whatever waited for approval.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Cordage } from '../core/host/app.ts'
import { FaultLab } from './fault-lab.ts'

/** Running: it exists and is not a zombie (a killed process whose parent died waits for pid 1 to reap it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

describe('cancellation', () => {
  it("kills a tool's child process and the processes it started", async () => {
    const lab = new FaultLab({ script: [{ tool: 'long_job', args: { seconds: 30 } }, { final: 'done' }] })
    const app = await Cordage.fromPreset(lab.presetFile)
    const agent = app.agent('pay')
    const handle = agent.start()
    const pidFile = join(lab.dir, 'job.pids')
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim().split('\n').length < 2) await new Promise((r) => setTimeout(r, 20))
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number)
    assert.ok(pids.every(alive), 'the shell and its sleep are running')

    const state = await agent.cancel(handle.runId, { by: 'ops' })
    assert.equal(state.status, 'CANCELLED')
    for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 20))
    assert.deepEqual(pids.filter(alive), [], 'no process of the job outlived the cancel')
    await app.stop()
    lab.close()
  })
})
