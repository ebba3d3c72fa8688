/**
 * A run joins a thread only through the `run/before-start` phase (core/contracts/phases.ts), which the
 * threads plugin handles (plugins/threads): the kernel records what the handlers fill in (the thread
 * link, the history the turn sees, the claim the store makes) only once it passed the kernel's check.
 * Fail closed: a thread asked for with no handler to fill the link is refused with one error naming the
 * plugin to add; a handler that throws or hands back a malformed link, a claim for another thread, turn
 * or agent, history that is not transcript entries of earlier turns, a changed task or a refusal with a
 * code a start cannot have, starts no run: nothing is recorded, nothing is claimed. Through the host
 * API and the real `cordage` binary, on store-memory and store-sqlite.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { CordageError } from 'cordage'
import { cordageBin } from '../bin.ts'
import { deskPreset, refundAnswer, supportDesk, tempDir, type Harness } from '../helpers.ts'

const script = [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }]
const rogue = (mode: string) => ({ path: resolve(import.meta.dirname, '../fixtures/plugins/rogue-thread-start'), config: { mode } })
const Needed = 'thread runs need the threads plugin: add `- threads` to agents.support.plugins'

function refusedWith(code: string, pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(CordageError.is(error, code as never), `expected ${code}, got ${String(error)}`)
    assert.match((error as Error).message, pattern)
    return true
  }
}

/** How many runs the desk's store holds, and how many turns thread `id` has. */
async function recorded(desk: Harness, id: string): Promise<[number, number]> {
  const store = desk.agent.store()
  return [(await store.list()).length, (await store.threadTurns!(id)).length]
}

describe('a thread run needs the threads plugin', () => {
  it('without it, run and submit with a thread are refused before anything is recorded, naming the plugin; other runs go on', async () => {
    const desk = await supportDesk({ script, threads: false })
    try {
      assert.throws(
        () => desk.agent.start('Hi?', { thread: 'T-1' }),
        refusedWith('feature_unsupported', new RegExp(`^${literal(Needed)}$`)),
      )
      await assert.rejects(
        desk.agent.submit('Hi?', { thread: 'T-1' }),
        refusedWith('feature_unsupported', new RegExp(`^${literal(Needed)}$`)),
      )
      assert.deepEqual(await recorded(desk, 'T-1'), [0, 0])
      const plain = await desk.agent.run('What is the refund window?')
      assert.equal(plain.status, 'COMPLETED', plain.reason)
      assert.equal(plain.thread, undefined)
    } finally {
      await desk.stop()
    }
  })

  it('with a run/before-start handler that leaves the link unset, the same refusal names the handler', async () => {
    const desk = await supportDesk({ script, plugins: [rogue('unlink')] })
    try {
      await assert.rejects(
        desk.agent.run('Hi?', { thread: 'T-1' }),
        refusedWith(
          'feature_unsupported',
          /^thread runs need the threads plugin: .*agents\.support\.plugins \(the run\/before-start handlers of threads@.*, rogue-thread-start@1\.0\.0 left the thread link unset\)$/,
        ),
      )
      assert.deepEqual(await recorded(desk, 'T-1'), [0, 0])
    } finally {
      await desk.stop()
    }
  })

  it('cordage run --thread and submit --thread exit 2 with the one error, and record nothing (store-sqlite)', () => {
    const dir = tempDir('cordage-thread-plugin-')
    const preset = join(dir, 'desk.yml')
    writeFileSync(
      preset,
      stringify({
        cordage: 1,
        agents: deskPreset({ script, threads: false, storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } } }, 'outbox.jsonl')
          .agents,
      }),
    )
    for (const command of ['run', 'submit']) {
      const out = spawnSync(process.execPath, [cordageBin, command, '--preset', preset, '--thread', 'T-1', '--task', 'Hi?'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      })
      assert.equal(out.status, 2, out.stderr)
      assert.match(out.stderr, new RegExp(`^error \\[feature_unsupported\\]: ${literal(Needed)}$`, 'm'))
    }
    const runs = spawnSync(process.execPath, [cordageBin, 'runs', '--preset', preset, '--json'], { cwd: dir, encoding: 'utf8' })
    assert.equal(runs.status, 0, runs.stderr)
    assert.equal(runs.stdout.trim(), '', 'no run was recorded')
  })
})

describe('the kernel checks what the run/before-start handlers fill in', () => {
  const firstTurn: [string, RegExp][] = [
    ['throw', /the thread index is gone/],
    ['garbage', /handler returns the draft of run\/start/],
    ['turn-zero', /thread\.turn must be a whole number from 1/],
    ['used-negative', /thread\.usedBefore\.inputTokens must be a number >= 0/],
    ['link-extra-key', /thread has the unknown key\(s\) budgetsWaived/],
    ['other-thread', /thread\.id must be the thread asked for \("T-1"\), got "someone-else"/],
    ['claim-other-thread', /claim must be \{ id: "T-1", turn: 1, agent: "support" \}/],
    ['claim-other-agent', /claim must be \{ id: "T-1", turn: 1, agent: "support" \}/],
    ['claim-other-turn', /claim must be \{ id: "T-1", turn: 1, agent: "support" \}/],
    ['task', /may not change task/],
    ['refuse-unknown-code', /refused\.code must be one of .*thread_busy.*, got "lease_lost"/],
  ]
  for (const [mode, problem] of firstTurn) {
    it(`refuses to start the run when a handler ${mode === 'throw' ? 'throws' : `hands back ${mode}`}: phase_failed, nothing recorded`, async () => {
      const desk = await supportDesk({ script, plugins: [rogue(mode)] })
      try {
        await assert.rejects(desk.agent.run('First?', { thread: 'T-1' }), (error: unknown) => {
          assert.ok(CordageError.is(error, 'phase_failed'), `expected phase_failed, got ${String(error)}`)
          assert.match((error as Error).message, /^the run\/before-start handler of rogue-thread-start@1\.0\.0 failed: /)
          assert.match((error as Error).message, problem)
          return true
        })
        assert.deepEqual(await recorded(desk, 'T-1'), [0, 0])
      } finally {
        await desk.stop()
      }
    })
  }

  const laterTurn: [string, RegExp][] = [
    ['history-not-entries', /history\.entries\[\d+\] is not a transcript entry: a user entry has a text/],
    ['history-this-turn', /history\.entries\[\d+\] is of turn t2: the history holds earlier turns only \(t1 to t1\)/],
    ['history-unprefixed', /history\.entries\[\d+\] is of turn t1, but its action id "s1\.a1" is not marked with it \(t1\.…\)/],
    ['history-other-run', /history\.from must be the run of the turn before \(run_[^)]+\), got "run_elsewhere"/],
    ['history-too-big', /history is \d+ bytes of JSON, more than the 262144 a thread\/history may carry/],
    ['no-history', /a turn after the first needs the history it sees \(history\)/],
  ]
  for (const [mode, problem] of laterTurn) {
    it(`refuses turn 2 when a handler hands back ${mode}: phase_failed, turn 1 alone in the store`, async () => {
      const desk = await supportDesk({ script, plugins: [rogue(mode)] })
      try {
        assert.equal((await desk.agent.run('First?', { thread: 'T-1' })).status, 'COMPLETED')
        await assert.rejects(desk.agent.run('Second?', { thread: 'T-1' }), refusedWith('phase_failed', problem))
        assert.deepEqual(await recorded(desk, 'T-1'), [1, 1])
      } finally {
        await desk.stop()
      }
    })
  }

  it('refuses a link on a run that was not asked to join a thread', async () => {
    const desk = await supportDesk({ script, plugins: [rogue('link-unasked')] })
    try {
      await assert.rejects(
        desk.agent.run('Hi?'),
        refusedWith('phase_failed', /no thread was asked for: thread, history and claim must stay unset/),
      )
      assert.equal((await desk.agent.store().list()).length, 0)
    } finally {
      await desk.stop()
    }
  })

  it("keeps the threads plugin's refusal when a later handler withdraws it: the closed thread takes no turn", async () => {
    const desk = await supportDesk({ script, plugins: [rogue('withdraw-refusal')] })
    try {
      assert.equal((await desk.agent.run('First?', { thread: 'T-1' })).status, 'COMPLETED')
      await desk.agent.closeThread('T-1', { by: 'bob' })
      await assert.rejects(
        desk.agent.run('Again?', { thread: 'T-1' }),
        refusedWith('phase_failed', /a refusal \(thread_closed\) cannot be withdrawn/),
      )
      assert.deepEqual(await recorded(desk, 'T-1'), [1, 1])
    } finally {
      await desk.stop()
    }
  })
})

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\`]/g, '\\$&')
}
