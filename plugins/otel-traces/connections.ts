/**
 * @module otel-traces/connections
 * The HTTP agent the OTLP exporter sends through, so the plugin decides two things the exporter
 * does not let it configure:
 * - a refused connection (nothing listens: the collector is down) fails the export at once. The
 *   exporter would retry it with backoff until `timeoutMs`, holding a finished `cordage run` that long
 *   for a collector that is not there;
 * - when the plugin gives up at exit, every request still open is torn down with an error the
 *   exporter does not retry, so no socket (and no retry timer) keeps the process alive.
 */
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { Duplex } from 'node:stream'

type Callback = (error: Error | null, socket?: Duplex) => void

/** Not in the exporter's list of retryable network errors, so a failure carrying it is final. */
const Final = 'ERR_OTEL_EXPORT_ABANDONED'

const final = (message: string) => Object.assign(new Error(message), { code: Final })

export class Connections {
  private readonly open = new Set<Duplex>()
  private closedWith?: string

  /** For the exporter's `httpAgentOptions`: one agent per protocol, keep-alive as the exporter's own. */
  readonly agentFor = (protocol: string): HttpAgent => {
    const agent = protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })
    const connect = agent.createConnection.bind(agent) as (options: object, callback: Callback) => Duplex | undefined
    agent.createConnection = ((options: object, callback: Callback) => {
      if (this.closedWith !== undefined) {
        callback(final(this.closedWith))
        return undefined
      }
      const socket = connect(options, callback)
      if (socket) this.track(socket)
      return socket
    }) as HttpAgent['createConnection']
    return agent
  }

  /** Tear down every open request; later ones fail at once. `reason` is what the failure says. */
  close(reason: string): void {
    this.closedWith ??= reason
    for (const socket of this.open) socket.destroy(final(reason))
  }

  private track(socket: Duplex): void {
    this.open.add(socket)
    socket.once('close', () => this.open.delete(socket))
    // Runs before the request sees the error: the message stays (connect ECONNREFUSED host:port), the
    // exporter just does not retry it.
    socket.prependListener('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || this.closedWith !== undefined) error.code = Final
    })
  }
}
