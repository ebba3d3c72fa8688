/**
 * The scripted provider server as a dev tool, to try a real adapter's preset with no network:
 *
 *   node --import tsx test/servers/main.ts --protocol openai --script test/servers/support-desk.yml
 *   OPENAI_BASE_URL=http://127.0.0.1:4010/v1 OPENAI_API_KEY=local npx cordage run --preset presets/openai.yml
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parse } from 'yaml'
import { ProviderServer, type ScriptedReply } from './provider-server.ts'

const usage = `usage: node --import tsx test/servers/main.ts [options]

Serves scripted model answers in a provider's real wire format, on loopback.

  --protocol openai|anthropic   the wire format (default openai)
  --port N                      the port (default 4010)
  --script FILE                 a YAML list of answers: { text, toolCalls: [{ name, args }], usage, fault }
                                (see test/servers/reply.ts); played in order, then again from the start
  --api-key KEY                 refuse requests without this key, as the provider would (401)
  --help                        this text`

function fail(message: string): never {
  console.error(`${message}\n\n${usage}`)
  process.exit(2)
}

let values
try {
  ;({ values } = parseArgs({
    options: {
      protocol: { type: 'string', default: 'openai' },
      port: { type: 'string', default: '4010' },
      script: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  }))
} catch (error) {
  fail((error as Error).message)
}
if (values.help) {
  console.log(usage)
  process.exit(0)
}
if (values.protocol !== 'openai' && values.protocol !== 'anthropic') fail(`--protocol must be openai or anthropic, not ${values.protocol}`)
const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, not ${values.port}`)
let replies: ScriptedReply[] = []
if (values.script) {
  try {
    replies = parse(readFileSync(values.script, 'utf8')) as ScriptedReply[]
  } catch (error) {
    fail(`cannot read --script ${values.script}: ${(error as Error).message}`)
  }
  if (!Array.isArray(replies)) fail(`${values.script}: expected a YAML list of answers`)
}
let server: ProviderServer
try {
  server = await ProviderServer.start({ protocol: values.protocol, port, apiKey: values['api-key'], replies, loop: true })
} catch (error) {
  if ((error as { code?: string }).code === 'EADDRINUSE')
    fail(`port ${port} is taken (is another copy of this server still running?); stop it, or pass --port`)
  throw error
}
const prefix = values.protocol === 'openai' ? 'OPENAI' : 'ANTHROPIC'
console.log(`${values.protocol} protocol on ${server.baseUrl}, ${replies.length} scripted answers, played in a loop`)
console.log(`export ${prefix}_BASE_URL=${server.baseUrl} ${prefix}_API_KEY=${values['api-key'] ?? 'local'}`)
process.on('SIGINT', () => void server.close().then(() => process.exit(0)))
