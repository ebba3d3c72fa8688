/**
 * @module cli/commands/run
 * `cordage run`: start a run of an agent of the preset (with --thread, as the thread's next turn) and
 * follow it live until it ends or pauses.
 */
import { CordageError } from '../../contracts/errors.ts'
import { cancelOnSignal, finish, follow, live, volatileStore } from '../live.ts'
import { open, overridesOf, pickAgent, startAgent, startingFor } from '../open.ts'
import type { Handler } from '../output.ts'
import { threadAgent } from './thread.ts'

export const run: Handler = async ({ flags }, io) => {
  const app = await open(io, flags, startingFor(flags))
  const view = live(io, flags)
  try {
    const threadId = flags.thread as string | undefined
    const agent = await startAgent(
      app,
      threadId !== undefined
        ? await threadAgent(app, threadId, flags.agent as string | undefined)
        : pickAgent(app, flags.agent as string | undefined),
    )
    const task = flags.task as string | undefined
    if (task !== undefined && !task.trim())
      throw new CordageError(
        'invalid_input',
        "--task is empty; give the task as text, or leave --task out to use the agent's task from the preset",
      )
    if (task === undefined && !agent.defaultTask)
      throw new CordageError('invalid_input', `agent "${agent.name}" has no task in the preset; pass --task TEXT`)
    let runId: string | undefined
    follow(app, view, () => runId, false, !!flags.stream)
    const handle = agent.start(task, { overrides: overridesOf(agent, flags), thread: threadId })
    runId = handle.runId
    const stopOnSignal = cancelOnSignal(agent, handle.runId, view.io)
    try {
      const state = await handle.done
      view.close()
      return finish(state, view.io, flags, volatileStore(app, agent.name))
    } finally {
      stopOnSignal()
    }
  } finally {
    view.close()
    await app.stop()
  }
}
