/**
 * The support desk driven by a real model adapter talking to the scripted provider server: the same
 * preset a user writes, with the key in an environment variable.
 */
import type { ModelDeltaEvent } from 'cordage'
import { supportDesk, type DeskOptions, type Harness } from '../helpers.ts'
import { ProviderServer, type ScriptedReply } from './provider-server.ts'

export const TestKeyEnv = 'CORDAGE_TEST_PROVIDER_KEY'
export const TestKey = 'sk-test-9f3b2c71d04e4a6fb8e1'

export interface Adapter {
  plugin: 'model-openai' | 'model-anthropic'
  protocol: 'openai' | 'anthropic'
}
export const Adapters: Adapter[] = [
  { plugin: 'model-openai', protocol: 'openai' },
  { plugin: 'model-anthropic', protocol: 'anthropic' },
]

export interface AdapterDesk extends Harness {
  server: ProviderServer
  deltas: ModelDeltaEvent[]
  close(): Promise<void>
}

export async function adapterDesk(
  adapter: Adapter,
  replies: ScriptedReply[],
  config: Record<string, unknown> = {},
  options: Partial<DeskOptions> = {},
): Promise<AdapterDesk> {
  process.env[TestKeyEnv] = TestKey
  const server = await ProviderServer.start({ protocol: adapter.protocol, apiKey: TestKey, replies })
  const modelPlugin = {
    plugin: adapter.plugin,
    config: { model: 'test-model', baseUrl: server.baseUrl, apiKeyEnv: TestKeyEnv, timeoutMs: 5000, ...config },
  }
  const desk = await supportDesk({ script: [], modelPlugin, retry: { attempts: 3, backoffMs: 1 }, verifier: { minCount: 0 }, ...options })
  const deltas: ModelDeltaEvent[] = []
  desk.agent.ctx.on('model/delta', (event) => {
    deltas.push(event)
  })
  return Object.assign(desk, {
    server,
    deltas,
    close: async () => {
      await desk.stop()
      await server.close()
    },
  })
}
