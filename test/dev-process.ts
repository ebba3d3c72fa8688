/**
 * `cordage dev ... --json` as a child process (the real binary), for the tests of hot reload and preset
 * edits: its stdout lines are parsed as they come, and `expect` waits for one that passes a test.
 */
import { spawn } from 'node:child_process'
import { cordageBin as bin } from './bin.ts'

export type Line = Record<string, unknown> & { type?: string; data?: Record<string, unknown> }

/**
 * Start `cordage dev --preset preset.yml --debounce 20 --json ...args` in `dir`. `expect(test, from)`
 * resolves with the first line after the `from`-th that passes `test`; it fails when the process exits
 * first, or after 30 s (a deadline for a hung test, not a measure: every wait is for an event).
 */
export function devProcess(dir: string, args: string[]) {
  const child = spawn(process.execPath, [bin, 'dev', '--preset', 'preset.yml', '--debounce', '20', '--json', ...args], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: Line[] = []
  let stderr = ''
  let buffer = ''
  const waiting = new Set<{ from: number; test: (l: Line) => boolean; done: (l: Line) => void }>()
  child.stdout.on('data', (chunk) => {
    buffer += chunk
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, at)) as Line
      buffer = buffer.slice(at + 1)
      lines.push(line)
      for (const w of waiting)
        if (lines.length > w.from && w.test(line)) {
          waiting.delete(w)
          w.done(line)
        }
    }
  })
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  const expect = (test: (l: Line) => boolean, from = 0): Promise<Line> => {
    const seen = lines.slice(from).find(test)
    if (seen) return Promise.resolve(seen)
    return Promise.race([
      new Promise<Line>((done) => waiting.add({ from, test, done })),
      exited.then(() => {
        throw new Error(`cordage dev exited; stderr:\n${stderr}`)
      }),
      new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`timed out; stderr:\n${stderr}`)), 30_000).unref()),
    ])
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    return { code: await exited, stderr }
  }
  return { child, lines, expect, stop, stderr: () => stderr }
}
