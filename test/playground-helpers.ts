/**
 * What the playground tests share: a copy of presets/default.yml that keeps its runs in a temp folder,
 * one whose agent runs a project-local policy folder (for hot reload), the header that carries a
 * playground's token, and a small Server-Sent Events reader.
 */
import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { join, resolve } from 'node:path'
import { parse, stringify } from 'yaml'
import { tempDir } from './helpers.ts'

const root = resolve(import.meta.dirname, '..')

const Chromium = '/usr/bin/chromium'
/** The launch flags that work on these machines as root (../shared/design/browser-notes.md); playwright adds --headless and a fresh profile. */
const Flags = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
/** Where the browser tests put their screenshots (git ignores tmp/). */
export const shots = resolve(root, 'tmp/playground-screenshots')
/** `skip` for a browser suite: only when Debian's chromium is missing here (.ci/run installs it). */
export const browserSkip = existsSync(Chromium) ? false : `${Chromium} is not installed (apt-get install -y chromium); .ci/run installs it`

/** Headless Chromium with one page; `pageErrors` collects the page's errors and console warnings. */
export async function openPage(): Promise<{ browser: Browser; page: Page; pageErrors: string[] }> {
  mkdirSync(shots, { recursive: true })
  const { chromium } = await import('playwright-core')
  // Chromium leaves files of its own in TMPDIR: a folder removed with the test's other temp dirs.
  const browser = await chromium.launch({
    executablePath: Chromium,
    headless: true,
    args: Flags,
    env: { ...process.env, TMPDIR: tempDir('crm-') },
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  const pageErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'warning' || message.type() === 'error') pageErrors.push(message.text())
  })
  return { browser, page, pageErrors }
}

/** presets/default.yml with its runs and outbox in a temp folder, and `delayMs` on the followup model. */
export function defaultPresetCopy(delayMs = 0): string {
  const dir = tempDir('cordage-playground-')
  const raw = parse(readFileSync(join(root, 'presets/default.yml'), 'utf8'))
  for (const agent of Object.values<{ plugins: unknown[] }>(raw.agents)) {
    agent.plugins = agent.plugins.map((p) =>
      p === 'store-sqlite@^1.0.0' ? { plugin: 'store-sqlite', version: '^1.0.0', config: { path: 'runs.db' } } : p,
    )
  }
  const followup = raw.agents.followup
  followup.plugins.find((p: { plugin?: string }) => p.plugin === 'support-desk').config.outbox = 'outbox.jsonl'
  followup.model.config.delayMs = delayMs
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(raw))
  return file
}

/**
 * The followup agent of presets/default.yml alone, in a temp folder, with its policy replaced by a
 * project-local copy of test/fixtures/plugins/reload-policy (`path: ./reload-policy`, the folder a test
 * edits) and a script of three steps: record_followup (asks for approval), lookup_policy (allowed), the
 * answer. `onDrift: accept` on the policy lets a run that waited across a reload go on (otherwise
 * resuming it is refused with version_drift). Runs and the outbox stay in the folder.
 */
/**
 * presets/default.yml's `followup` agent with its policy replaced by a copy of the reload-policy
 * fixture; `folders` is how many plugin folders a watch of it follows (its plugins and its model).
 */
export function reloadPresetCopy(): { dir: string; preset: string; plugin: string; folders: number } {
  const dir = tempDir('cordage-playground-reload-')
  const plugin = join(dir, 'reload-policy')
  cpSync(join(root, 'test/fixtures/plugins/reload-policy'), plugin, { recursive: true })
  // An ES module package of its own, outside the repository.
  writeFileSync(join(plugin, 'package.json'), JSON.stringify({ type: 'module' }))
  const raw = parse(readFileSync(join(root, 'presets/default.yml'), 'utf8'))
  const followup = raw.agents.followup
  followup.plugins = followup.plugins.map((p: string | { plugin?: string; config?: Record<string, unknown> }) => {
    if (p === 'store-sqlite@^1.0.0') return { plugin: 'store-sqlite', version: '^1.0.0', config: { path: 'runs.db' } }
    // onDrift: accept lets a run that waited across a reload continue on the version serving now.
    if (typeof p === 'object' && p.plugin === 'policy-rules') return { path: './reload-policy', onDrift: 'accept' }
    if (typeof p === 'object' && p.plugin === 'support-desk') return { ...p, config: { ...p.config, outbox: 'outbox.jsonl' } }
    return p
  })
  followup.model.config.script = [
    { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved; customer informed.' } },
    { tool: 'lookup_policy', args: { topic: 'refunds' } },
    { final: 'The follow-up is recorded on the ticket [source: T-1001].' },
  ]
  const preset = join(dir, 'preset.yml')
  writeFileSync(preset, stringify({ ...raw, agents: { followup } }))
  return { dir, preset, plugin, folders: followup.plugins.length + 1 }
}

/** The header every /api request needs: the playground's secret token (playground/auth.ts). */
export function bearer(playground: { token: string }): Record<string, string> {
  return { authorization: `Bearer ${playground.token}` }
}

export interface Frame {
  id?: string
  event: string
  data: any
}

/** Read a Server-Sent Events response frame by frame until `until` says stop (or the server ends it). */
export async function readSse(url: string, headers: Record<string, string>, until: (frame: Frame) => boolean): Promise<Frame[]> {
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/)
  const frames: Frame[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      let end
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const frame: Partial<Frame> = {}
        for (const line of block.split('\n')) {
          const [key, ...rest] = line.split(': ')
          if (key === 'id') frame.id = rest.join(': ')
          if (key === 'event') frame.event = rest.join(': ')
          if (key === 'data') frame.data = JSON.parse(rest.join(': '))
        }
        if (!frame.event) continue
        frames.push(frame as Frame)
        if (until(frame as Frame)) return frames
      }
    }
    return frames
  } finally {
    abort.abort()
  }
}
