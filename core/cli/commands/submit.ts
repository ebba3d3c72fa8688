/**
 * @module cli/commands/submit
 * `cordage submit`: record a run for a worker to drive, and print its id.
 */
import { CordageError } from '../../contracts/errors.ts'
import { ExitCodes } from '../exit-codes.ts'
import { open, pickAgent, startAgent, startingFor } from '../open.ts'
import type { Handler } from '../output.ts'
import { threadAgent } from './thread.ts'

export const submit: Handler = async ({ flags }, io) => {
  const app = await open(io, flags, startingFor(flags))
  try {
    const threadId = flags.thread as string | undefined
    const agent = await startAgent(
      app,
      threadId !== undefined
        ? await threadAgent(app, threadId, flags.agent as string | undefined)
        : pickAgent(app, flags.agent as string | undefined),
    )
    const task = flags.task as string | undefined
    if (task !== undefined && !task.trim()) throw new CordageError('invalid_input', '--task is empty')
    const runId = await agent.submit(task, { thread: threadId })
    io.out(flags.json ? JSON.stringify({ runId }) : runId)
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}
