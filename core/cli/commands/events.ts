/**
 * @module cli/commands/events
 * `cordage events RUN`: a run's events from the store, and with --follow each new one as it is stored.
 */
import { CordageError } from '../../contracts/errors.ts'
import { ExitCodes } from '../exit-codes.ts'
import { print } from '../live.ts'
import { locate, open } from '../open.ts'
import type { Handler } from '../output.ts'

export const events: Handler = async ({ flags, positionals: [runId] }, io) => {
  const after = flags.after === undefined ? 0 : Number(flags.after)
  if (!Number.isInteger(after) || after < 0)
    throw new CordageError('invalid_input', `--after must be a whole number ≥ 0, got ${JSON.stringify(flags.after)}`)
  const app = await open(io, flags, 'stores')
  try {
    const agent = await locate(app, runId, flags.agent as string | undefined)
    if (!flags.follow) {
      for (const event of await agent.store().read(runId, { after })) print(io, event, !!flags.json)
      return ExitCodes.ok
    }
    // Replays what is stored after the cursor, then each new event as it becomes durable.
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal)
    try {
      for await (const event of agent.follow(runId, { after, signal: stop.signal })) print(io, event, !!flags.json)
    } finally {
      process.off('SIGINT', onSignal)
    }
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}
