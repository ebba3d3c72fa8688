/**
 * @module cli/commands/playground
 * `cordage playground`: serve the web playground on 127.0.0.1 until Ctrl-C. The playground is loaded
 * through its public entry only here, so the other commands do not pay for the web server.
 */
import { CordageError } from '../../contracts/errors.ts'
import { ExitCodes } from '../exit-codes.ts'
import { everyAgent, logLevelOf, presetFile } from '../open.ts'
import type { Handler } from '../output.ts'

export const playground: Handler = async ({ flags }, io) => {
  const port = flags.port === undefined ? undefined : Number(flags.port)
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    throw new CordageError('invalid_input', `--port must be a whole number from 0 to 65535, got ${JSON.stringify(flags.port)}`)
  const file = presetFile(flags)
  if (!flags.watch && flags.debounce !== undefined)
    throw new CordageError('invalid_input', '--debounce applies to --watch only; add --watch')
  const { debounceOf, printReload, printWatching } = await import('../dev.ts')
  const watch = flags.watch ? { debounceMs: debounceOf(flags) } : undefined
  const { startPlayground } = await import('cordage/playground')
  const token = (flags.token as string | undefined) ?? (process.env.CORDAGE_PLAYGROUND_TOKEN || undefined)
  const playground = await startPlayground({
    preset: file,
    agents: flags.agent ? [String(flags.agent)] : undefined,
    port,
    watch,
    token,
    readOnly: !!flags['read-only'],
    logLevel: logLevelOf(flags),
    log: (line) => io.err(line),
    onError: (error) => io.err(`[playground] ${(error as Error)?.message ?? error}`),
  }).catch((error) => {
    const agent = CordageError.is(error) ? (error.data as { agent?: string } | undefined)?.agent : undefined
    throw agent && !flags.agent ? everyAgent(error, agent, 'playground') : error
  })
  // The address carries the secret token (printed to whoever started it, as notebook servers do).
  io.err(`playground for ${playground.app.preset.shown} on ${playground.url} ${playground.readOnly ? '(read-only) ' : ''}(Ctrl-C to stop)`)
  // Who swapped what through the page's API, in the terminal too.
  playground.feed.subscribe(({ type, data: d }) => {
    if (type === 'plugin/swapped')
      io.err(
        `${d.ok ? 'swapped' : 'swap FAILED:'} ${d.name} in ${d.agent}${d.ok ? `: ${d.from} → ${d.to}` : ` [${d.code}]`} by ${JSON.stringify(d.by)} (${d.via})`,
      )
  })
  if (playground.reloader) {
    // The same lines as cordage dev: what is watched, then each reload as it happens.
    playground.app.root.on('plugin/reloaded', (event) => printReload(event, io))
    printWatching(playground.reloader, io)
  }
  await new Promise<void>((done) => {
    process.once('SIGINT', () => done())
    process.once('SIGTERM', () => done())
  })
  await playground.close()
  return ExitCodes.ok
}
