/**
 * A `cordage run` whose run is over exits soon, whatever the collector does: a collector that is
 * down (connection refused) fails the export at once instead of being retried until timeoutMs, and
 * one that never answers is given up on a short while after the plugin stops. Real child processes
 * running the CLI, real servers on loopback. No timing is measured: with timeoutMs at its maximum,
 * 60 s, the process must simply be gone within 15 s of starting (a plain `cordage run` took up to
 * 6.4 s on a loaded 2-core machine), and it must have said what it dropped. That a refused connection
 * is not retried is counted, not timed, in connections.test.ts.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { dirname } from 'node:path'
import { describe, it } from 'node:test'
import { deskFile } from './desk.ts'
import { startReceiver } from './receiver.ts'
import { cordageBin as bin } from '../../../test/bin.ts'

/** Far below timeoutMs: a process still there then is waiting on the collector. */
const GoneWithinMs = 15_000
const TimeoutMs = 60_000

interface Exit {
  code: number | null
  stderr: string
}

function cordageRun(preset: string): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, 'run', '--preset', preset], {
      cwd: dirname(preset),
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const stillThere = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`cordage run was still running ${GoneWithinMs} ms after it started (timeoutMs ${TimeoutMs}); stderr:\n${stderr}`))
    }, GoneWithinMs)
    child.on('error', fail)
    child.on('exit', (code) => {
      clearTimeout(stillThere)
      // Wait for stderr to be read to its end.
      if (child.stderr.readableEnded) done({ code, stderr })
      else child.stderr.once('end', () => done({ code, stderr }))
    })
  })
}

/** A port nothing listens on: one the system just handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  await new Promise((r) => server.close(r))
  return port
}

describe('otel-traces: cordage run exits soon whatever the collector does', () => {
  it('a collector that is down: the export fails at once, is logged without the query string, and the process exits', async () => {
    const port = await closedPort()
    const preset = deskFile({ endpoint: `http://127.0.0.1:${port}/v1/traces?api_token=sekrit-in-query`, timeoutMs: TimeoutMs })
    const { code, stderr } = await cordageRun(preset)
    assert.equal(code, 5, `the run paused for approval as scripted; stderr:\n${stderr}`)
    const warnings = stderr.split('\n').filter((l) => l.includes('could not export'))
    assert.ok(warnings.length > 0, `the failed export was logged; stderr:\n${stderr}`)
    for (const line of warnings)
      assert.match(
        line,
        new RegExp(
          `^warn \\[support/otel-traces\\] could not export \\d+ span\\(s\\) to http://127\\.0\\.0\\.1:${port}/v1/traces: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}; they are dropped$`,
        ),
      )
    assert.ok(!stderr.includes('sekrit'), 'the query string (it may carry a token) is not logged')
  })

  it('a collector that never answers: the plugin gives up shortly after it stops, says so, and the process exits', async () => {
    const receiver = await startReceiver('hang')
    try {
      const preset = deskFile({ endpoint: receiver.url, timeoutMs: TimeoutMs })
      const { code, stderr } = await cordageRun(preset)
      assert.equal(code, 5, `the run paused for approval as scripted; stderr:\n${stderr}`)
      assert.ok(receiver.requests.length > 0, 'the export reached the collector, which never answered')
      assert.match(
        stderr,
        /^warn \[support\/otel-traces\] could not export \d+ span\(s\) to http:\/\/127\.0\.0\.1:\d+\/v1\/traces: the plugin stopped and waited 2000 ms for the collector, no longer; they are dropped$/m,
      )
    } finally {
      await receiver.close()
    }
  })
})
