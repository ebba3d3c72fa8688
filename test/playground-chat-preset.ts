/**
 * The preset of the chat view's tests (test/playground-threads-api.test.ts,
 * test/playground-chat-browser.test.ts), in a temp folder: agent `chat` answers with
 * test/fixtures/plugins/echo-model (its answer repeats the user's last message and lists the earlier
 * ones it saw; "please record" first asks for record_followup, which waits for approval) on store-sqlite;
 * agent `legacy` keeps its runs in a store without threads (test/fixtures/plugins/store-without-threads).
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { tempDir } from './helpers.ts'

const root = resolve(import.meta.dirname, '..')

/** The preset file; `delayMs` is how long each model answer takes. */
export function chatPresetCopy(delayMs = 0): string {
  const dir = tempDir('cordage-playground-chat-')
  const policy = {
    plugin: 'policy-rules',
    version: '^2.0.0',
    config: {
      default: 'deny',
      approvers: ['*'],
      rules: [
        { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
        { id: 'followups-need-approval', verdict: 'ask', match: { tool: 'record_followup' }, reason: 'a person signs follow-ups off' },
      ],
    },
  }
  const common = [
    'tools-registry@^1.0.0',
    'context-basic@^1.0.0',
    { plugin: 'verifier-basic', version: '^1.0.0', config: { minCount: 0 } },
    policy,
    { plugin: 'support-desk', version: '^1.0.0', config: { outbox: 'outbox.jsonl' } },
  ]
  const preset = {
    cordage: 1,
    agents: {
      chat: {
        description: 'Chats: repeats what it was told, and what it was told before.',
        budgets: { maxSteps: 4, maxRepairs: 0 },
        model: { path: join(root, 'test/fixtures/plugins/echo-model'), config: { delayMs } },
        plugins: [{ plugin: 'store-sqlite', version: '^1.0.0', config: { path: 'runs.db' } }, ...common, 'threads@^1.0.0'],
      },
      legacy: {
        description: 'Keeps its runs in a store without threads.',
        budgets: { maxSteps: 4, maxRepairs: 0 },
        model: { path: join(root, 'test/fixtures/plugins/echo-model') },
        plugins: [{ path: join(root, 'test/fixtures/plugins/store-without-threads') }, ...common],
      },
    },
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}
