/**
 * Preloaded into each `cordage worker` the bench starts (`node --import tsx --import probe.ts bin.js
 * worker`): counts the worker's statements and writes them, as JSON, to SCALE_OUT_PROBE when the
 * process exits. The worker itself is the real command, unchanged.
 */
import { writeFileSync } from 'node:fs'
import { countStatements } from './statements.ts'

const file = process.env.SCALE_OUT_PROBE
if (!file) throw new Error('probe.ts: set SCALE_OUT_PROBE to the file the statements go to')
const log = countStatements()
let ready = false
const poll = setInterval(() => {
  // The first claim answered: the worker has started and polls; the bench waits for every worker to say so.
  if (!ready && log.some((s) => s.kind === 'claimNext')) {
    ready = true
    clearInterval(poll)
    process.stderr.write('scale-out: ready\n')
  }
}, 5)
poll.unref()
process.on('exit', () => writeFileSync(file, JSON.stringify({ pid: process.pid, statements: log })))
