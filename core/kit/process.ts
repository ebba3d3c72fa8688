/**
 * @module process
 * Running a child process from a tool so that none of it outlives the call. The child gets its own
 * process group. When the tool's signal aborts (cancel, timeout), the group gets SIGTERM and, if it is
 * still there after `killAfterMs`, SIGKILL; when the child exits, however it exits, what is left of the
 * group gets SIGKILL at once. Killing only the direct child would leave its children (a shell's
 * `sleep`, a build's workers) running, and possibly still changing things.
 *
 * A process that starts its own session or group (setsid, a daemon) leaves the process group. So on
 * Linux, where the harness may make a cgroup (cgroup v2, as root or in a delegated cgroup), the child
 * also gets a cgroup of its own, joined before it runs anything, and killed whole (`cgroup.kill`) when
 * the child exits. Every process the child starts is born in it and only a privileged process can move
 * out. A cgroup, unlike a PID namespace, leaves pids as they are and lets the child start threads.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { delimiter, join, resolve as resolvePath } from 'node:path'
import { CordageError } from '../contracts/errors.ts'

export interface ProcessOptions {
  /** The tool's `io.signal`: aborting it kills the process group. */
  signal: AbortSignal
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Grace between SIGTERM and SIGKILL, and how long output is still read after the child exits. Default 500 ms. */
  killAfterMs?: number
  /** Keep at most this many characters of stdout and of stderr. Default 1 MB. */
  maxOutput?: number
  /** `false`: the process group only, no cgroup even where one can be made. Default true. */
  contain?: boolean
}

/**
 * What held a child's processes so that they ended with it. `cgroup`: all of them, unless one moved
 * itself to another cgroup (which takes privilege). `process-group`: all but those that started their
 * own session or process group.
 */
export type Containment = 'cgroup' | 'process-group'

export interface ProcessResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** The process group id (the child's pid), for checking that it is gone. */
  pid: number
  /** How the child's processes were contained. */
  containment: Containment
}

// The child starts as this shell and waits until the harness has put it in its cgroup, so that
// everything the command starts is born there; then it gives the command the usual empty stdin.
const Shim = 'read go || exit 125; exec </dev/null; exec "$@"'

let parent: string | undefined
let looked = false
let calls = 0

/**
 * The cgroup v2 folder under which this process may make cgroups that `cgroup.kill` works in (the
 * folder of its own cgroup), or undefined when there is none. Looked up once.
 */
function cgroupParent(): string | undefined {
  if (looked || process.platform !== 'linux') return parent
  looked = true
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8').match(/^0::(\/.*)$/m)?.[1]
    // mountinfo: id parent dev root mountpoint options ... - fstype source options
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2' && own?.startsWith(f[3]))
    if (!own || !mount) return parent
    const folder = join(mount[4], own.slice(mount[3].length))
    const probe = join(folder, `cordage-${process.pid}-probe`)
    mkdirSync(probe)
    try {
      statSync(join(probe, 'cgroup.kill'))
      parent = folder
    } finally {
      rmdirSync(probe)
    }
  } catch {
    /* no cgroup v2, not allowed to make one here, or a kernel without cgroup.kill (before 5.14) */
  }
  return parent
}

/** Kill everything in a cgroup made for a call, wait (up to a second) until it is empty, and remove it. */
async function endCgroup(dir: string): Promise<void> {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1')
    for (let i = 0; i < 200 && /populated 1/.test(readFileSync(join(dir, 'cgroup.events'), 'utf8')); i++) {
      await new Promise((r) => setTimeout(r, 5))
    }
  } catch {
    /* already gone */
  }
  removeTree(dir)
}

// The command may have made cgroups inside its own; they have to go first.
function removeTree(dir: string): void {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeTree(join(dir, entry.name))
    rmdirSync(dir)
  } catch {
    /* still busy (a process that would not die): left for the system */
  }
}

/** The executable file `command` names, searched for as execvp does, or undefined. */
function which(command: string, path: string | undefined, cwd: string): string | undefined {
  for (const dir of command.includes('/') ? [''] : (path ?? '/usr/bin:/bin').split(delimiter)) {
    const file = resolvePath(cwd, dir, command)
    try {
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK)
        return file
      }
    } catch {
      /* not here */
    }
  }
  return undefined
}

/**
 * Run `command` with `args` in its own process group and, on Linux where possible, its own cgroup
 * (`result.containment` says which).
 * Contract: resolves when the process exits, however it exits, and by then nothing it started is left
 * (but what escaped its containment); rejects only when it cannot start (CordageError `tool_failed`).
 * When `signal` aborts, the group gets SIGTERM, then SIGKILL after `killAfterMs`.
 */
export function runProcess(command: string, args: string[], options: ProcessOptions): Promise<ProcessResult> {
  const max = options.maxOutput ?? 1_000_000
  const grace = options.killAfterMs ?? 500
  let cgroup = newCgroup(options)
  // Checked here because behind the shim a command that cannot start would only be an exit code 127.
  if (cgroup && !which(command, (options.env ?? process.env).PATH, options.cwd ?? process.cwd())) {
    removeTree(cgroup)
    return Promise.reject(
      new CordageError('tool_failed', `cannot start ${command}: no executable file of that name${command.includes('/') ? '' : ' on PATH'}`),
    )
  }
  return new Promise((resolve, reject) => {
    const started = spawnIn(cgroup, command, args, options)
    const child = started.child
    cgroup = started.cgroup
    const containment: Containment = cgroup ? 'cgroup' : 'process-group'
    let ended: Promise<void> = Promise.resolve()
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => {
      if (stdout.length < max) stdout += d
    })
    child.stderr!.on('data', (d) => {
      if (stderr.length < max) stderr += d
    })
    let killTimer: ReturnType<typeof setTimeout> | undefined
    let readTimer: ReturnType<typeof setTimeout> | undefined
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig)
      } catch {
        /* the group is already gone */
      }
    }
    const onAbort = () => {
      killGroup('SIGTERM')
      killTimer = setTimeout(() => killGroup('SIGKILL'), grace)
      killTimer.unref?.()
    }
    child.on('error', (error) => {
      options.signal.removeEventListener('abort', onAbort)
      if (cgroup) removeTree(cgroup)
      reject(new CordageError('tool_failed', `cannot start ${command}: ${error.message}`, { cause: error }))
    })
    child.on('exit', () => {
      options.signal.removeEventListener('abort', onAbort)
      clearTimeout(killTimer)
      killGroup('SIGKILL')
      if (cgroup) ended = endCgroup(cgroup)
      // A process that escaped may still hold the pipes: read what is there, not until it ends.
      readTimer = setTimeout(() => {
        child.stdout!.destroy()
        child.stderr!.destroy()
      }, grace)
    })
    child.on('close', async (code, signal) => {
      clearTimeout(readTimer)
      await ended
      resolve({ code, signal, stdout, stderr, pid: child.pid!, containment })
    })
    if (options.signal.aborted) onAbort()
    else options.signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** A cgroup of its own for one command, when the machine lets this process make one (Linux, cgroup v2, delegated). */
function newCgroup(options: ProcessOptions): string | undefined {
  const base = options.contain === false ? undefined : cgroupParent()
  const cgroup = base && join(base, `cordage-${process.pid}-${++calls}`)
  try {
    if (cgroup) mkdirSync(cgroup)
    return cgroup || undefined
  } catch {
    return undefined
  }
}

/**
 * Start the command in its own process group, and inside `cgroup` when there is one: through a shell
 * that waits until its pid is in the cgroup before it runs the command. The cgroup is dropped (removed,
 * undefined) when the pid cannot be put in it.
 */
function spawnIn(
  cgroup: string | undefined,
  command: string,
  args: string[],
  options: ProcessOptions,
): { child: ChildProcess; cgroup: string | undefined } {
  const child = cgroup
    ? spawn('/bin/sh', ['-c', Shim, 'sh', command, ...args], {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  if (cgroup) {
    // The shell waits for the line below: nothing runs before it is in the cgroup.
    try {
      writeFileSync(join(cgroup, 'cgroup.procs'), String(child.pid ?? ''))
    } catch {
      removeTree(cgroup)
      cgroup = undefined
    }
    child.stdin?.on('error', () => {
      /* the shell did not start: reported by 'error' */
    })
    child.stdin?.end('go\n')
  }
  return { child, cgroup }
}
