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

const { values } = parseArgs({
  options: {
    protocol: { type: 'string', default: 'openai' },
    port: { type: 'string', default: '4010' },
    script: { type: 'string' },
    'api-key': { type: 'string' },
    'repeat-last': { type: 'boolean', default: false },
  },
})
if (values.protocol !== 'openai' && values.protocol !== 'anthropic') {
  console.error(`--protocol must be openai or anthropic, not ${values.protocol}`)
  process.exit(2)
}
const replies = values.script ? (parse(readFileSync(values.script, 'utf8')) as ScriptedReply[]) : []
if (!Array.isArray(replies)) {
  console.error(`${values.script}: expected a YAML list of replies ({ text, toolCalls, usage, fault })`)
  process.exit(2)
}
const server = await ProviderServer.start({ protocol: values.protocol, port: Number(values.port), apiKey: values['api-key'], replies, repeatLast: values['repeat-last'] })
const prefix = values.protocol === 'openai' ? 'OPENAI' : 'ANTHROPIC'
console.log(`${values.protocol} protocol on ${server.baseUrl}, ${replies.length} scripted replies`)
console.log(`export ${prefix}_BASE_URL=${server.baseUrl} ${prefix}_API_KEY=${values['api-key'] ?? 'local'}`)
process.on('SIGINT', () => void server.close().then(() => process.exit(0)))
