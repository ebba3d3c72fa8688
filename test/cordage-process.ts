/**
 * The real `cordage` binary (core/cli/bin.js) as a child process, as a user's shell runs it: what it
 * printed and how it exited. Asynchronous, so a test's own servers keep answering meanwhile.
 */
import { spawn } from 'node:child_process'
import { cordageBin as bin } from './bin.ts'

export interface Exited {
  code: number | null
  out: string
  err: string
}

export function cordage(args: string[], cwd: string): Promise<Exited> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('error', fail)
    child.on('close', (code) => done({ code, out, err }))
  })
}
