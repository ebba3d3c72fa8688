/**
 * Nothing a tool's child process starts outlives the call (core/kit/process.ts), with real processes.
 * Each process to watch gets a unique argument (`sleep 300.<n>`) and is found by it in /proc. A command
 * that must not end before its children run waits for a file the test writes once it has seen them.
 */
import assert from 'node:assert/strict'
import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CordageError, runProcess, type ProcessOptions, type ProcessResult } from 'cordage'
import { tempDir } from '../temp.ts'

const never = new AbortController().signal
const here = (await runProcess('true', [], { signal: never })).containment
const noCgroup =
  here === 'cgroup'
    ? false
    : `no cgroup can be made here (containment is ${here}); docs/concepts/security-processes.md says what escapes then`

/** The cgroup v2 folder of this process, when cgroup v2 is mounted writable (found apart from core/kit/process.ts). */
function ownCgroupFolder(): string | undefined {
  if (process.platform !== 'linux') return undefined
  const own = readFileSync('/proc/self/cgroup', 'utf8').match(/^0::(\/.*)$/m)?.[1]
  const mount = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .find((f) => f[f.indexOf('-') + 1] === 'cgroup2' && f[5].split(',').includes('rw') && own?.startsWith(f[3]))
  return own && mount ? join(mount[4], own.slice(mount[3].length)) : undefined
}

let tokens = 0
/** A `sleep` argument no other process has: 300 seconds and a unique fraction. */
const token = () => `300.${process.pid}${String(++tokens).padStart(3, '0')}`

/** Host pids of the live processes whose argv has `arg` (a zombie's argv is empty). */
function running(arg: string): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // Not `setsid` itself: until it has made its session and exec'd the command, the group kill still reaches it.
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')
      if (argv.includes(arg) && !argv[0].endsWith('setsid')) pids.push(Number(name))
    } catch {
      /* it ended */
    }
  }
  return pids
}

/** Running: it exists and is not a zombie waiting for its new parent to reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ESRCH')
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

async function until(what: string, done: () => boolean, ms = 5000): Promise<void> {
  for (const t0 = Date.now(); !done(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() - t0 > ms) assert.fail(`waited ${ms} ms for: ${what}`)
  }
}

/**
 * Run a shell `script` that starts processes with the given tokens (as $T1, $T2, … in its environment)
 * and then waits for $GO. Returns the host pids seen while they ran, and the result.
 */
async function withRunning(
  script: string,
  count: number,
  options: Partial<ProcessOptions> = {},
  beforeGo?: () => void,
): Promise<{ pids: number[]; stdout: string; result: ProcessResult }> {
  const dir = tempDir()
  const ts = Array.from({ length: count }, token)
  const env = { ...process.env, GO: join(dir, 'go'), NODE: process.execPath, ...Object.fromEntries(ts.map((t, i) => [`T${i + 1}`, t])) }
  const call = runProcess('/bin/sh', ['-c', `${script}\nuntil [ -e "$GO" ]; do sleep 0.01; done`], { signal: never, env, ...options })
  let pids: number[] = []
  await until(`processes ${ts.join(', ')} running`, () => (pids = ts.flatMap(running)).length === count)
  beforeGo?.()
  writeFileSync(env.GO, '')
  const result = await call
  return { pids, stdout: result.stdout, result }
}

/** Kill what a test let escape. */
function killAll(pids: number[]): void {
  for (const pid of pids)
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
}

async function assertGone(pids: number[]): Promise<void> {
  for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 20))
  assert.deepEqual(pids.filter(alive), [], 'no process of the call outlived it')
}

describe('child processes of a tool end with the call', { timeout: 60_000 }, () => {
  const rootWithCgroups = process.getuid?.() === 0 && ownCgroupFolder() !== undefined
  it('as root on Linux with cgroup v2 mounted writable, the children are held in a cgroup', {
    skip: rootWithCgroups ? false : 'not root on Linux with a writable cgroup v2 mount',
  }, () => {
    assert.equal(here, 'cgroup', "root can make a cgroup here; without one a setsid'd child escapes")
  })

  it('leaves no cgroup behind', { skip: noCgroup }, async () => {
    await runProcess('/bin/sh', ['-c', 'sleep 0.01 & setsid sleep 0.01 &'], { signal: never })
    const left = readdirSync(ownCgroupFolder()!).filter((name) => name.startsWith(`cordage-${process.pid}-`))
    assert.deepEqual(left, [])
  })

  it('a command can start threads (node, which a PID namespace would break)', async () => {
    const result = await runProcess(
      process.execPath,
      ['-e', 'new (require("node:worker_threads").Worker)("", { eval: true }).on("exit", () => console.log("worker ran"))'],
      { signal: never },
    )
    assert.deepEqual([result.code, result.stdout], [0, 'worker ran\n'])
  })

  for (const contain of [true, false]) {
    it(`a backgrounded child is killed when the command exits normally (contain: ${contain})`, async () => {
      const { pids, result } = await withRunning('sleep "$T1" & echo $$ $!', 1, { contain })
      assert.equal(result.code, 0)
      assert.equal(result.containment, contain ? here : 'process-group')
      // The command and its child keep the harness's pids, as the command sees them.
      assert.deepEqual(result.stdout.trim().split(' ').map(Number), [result.pid, pids[0]])
      await assertGone(pids)
    })
  }

  it('a child that starts its own session, or a daemon, is killed with the call', { skip: noCgroup }, async () => {
    const { pids, result } = await withRunning(
      `setsid sleep "$T1" &
      "$NODE" -e 'require("node:child_process").spawn("sleep", [process.env.T2], { detached: true, stdio: "inherit" }).unref()' &
      (setsid sh -c 'sleep "$T3" &' >/dev/null 2>&1 &)`,
      3,
    )
    assert.equal(result.containment, 'cgroup')
    assert.equal(result.code, 0)
    await assertGone(pids)
  })

  it('without a cgroup, a child that starts its own session escapes (as documented)', async () => {
    const { pids, result } = await withRunning('setsid sleep "$T1" >/dev/null 2>&1 &', 1, { contain: false })
    try {
      assert.equal(result.containment, 'process-group')
      await new Promise((r) => setTimeout(r, 100))
      assert.deepEqual(pids.filter(alive), pids, 'setsid left the process group, which is all that was killed')
    } finally {
      killAll(pids)
    }
  })

  it('the call ends when the command does, even if an escaped process still holds its output', async () => {
    // The setsid'd sleep keeps stdout open; without a cgroup it lives on, and the call must not wait for it.
    const { pids, result } = await withRunning('setsid sleep "$T1" & echo done', 1, { contain: false, killAfterMs: 100 })
    try {
      assert.equal(result.code, 0)
      assert.equal(result.stdout, 'done\n')
    } finally {
      killAll(pids)
    }
  })

  it('abort kills the whole tree, including a child in its own session', async () => {
    const abort = new AbortController()
    const { pids, result } = await withRunning('setsid sleep "$T1" & sleep "$T2" & wait', 2, { signal: abort.signal }, () => abort.abort())
    try {
      assert.equal(result.signal, 'SIGTERM', 'the shell ended on SIGTERM, before the file it waited for')
      await assertGone(here === 'cgroup' ? pids : pids.slice(1))
    } finally {
      killAll(pids)
    }
  })

  it('abort of a command that ignores SIGTERM ends it with SIGKILL after killAfterMs', async () => {
    const abort = new AbortController()
    const { pids, result } = await withRunning(
      'trap "" TERM; sleep "$T1" & setsid sleep "$T2" & wait',
      2,
      { signal: abort.signal, killAfterMs: 100 },
      () => abort.abort(),
    )
    try {
      assert.equal(result.signal, 'SIGKILL')
      await assertGone(here === 'cgroup' ? pids : pids.slice(0, 1))
    } finally {
      killAll(pids)
    }
  })
})

describe('runProcess results', { timeout: 30_000 }, () => {
  for (const contain of [true, false]) {
    it(`exit code, stdout and stderr come back (contain: ${contain})`, async () => {
      const result = await runProcess('/bin/sh', ['-c', 'printf out; printf err >&2; exit 7'], { signal: never, contain })
      assert.deepEqual([result.code, result.signal, result.stdout, result.stderr], [7, null, 'out', 'err'])
    })

    it(`a command that cannot start rejects with tool_failed (contain: ${contain})`, async () => {
      for (const command of ['no-such-command-anywhere', './no-such-file']) {
        await assert.rejects(runProcess(command, [], { signal: never, contain }), (error: CordageError) => {
          assert.ok(error instanceof CordageError)
          assert.equal(error.code, 'tool_failed')
          assert.match(error.message, /^cannot start /)
          return true
        })
      }
    })

    it(`a relative command is found from cwd, and PATH from env (contain: ${contain})`, async () => {
      const dir = tempDir()
      writeFileSync(join(dir, 'hello'), '#!/bin/sh\necho "hello from $0"\n')
      chmodSync(join(dir, 'hello'), 0o755)
      assert.equal((await runProcess('./hello', [], { signal: never, cwd: dir, contain })).stdout, 'hello from ./hello\n')
      const env = { ...process.env, PATH: `${dir}:${process.env.PATH}` }
      assert.equal((await runProcess('hello', [], { signal: never, env, contain })).stdout, `hello from ${join(dir, 'hello')}\n`)
    })
  }
})
