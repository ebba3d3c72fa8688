/**
 * Docs are part of the contract: the examples they show are loaded and run here, the reference
 * tables (events, error codes, CLI commands) are compared with the code in both directions, and every
 * relative link between pages resolves.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Codes, Contracts, Kinds, PluginEventTypes, PreviewEventTypes, RunEventTypes, type CordageError } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { Commands } from '../core/cli/args.ts'
import { ExitCodes } from '../core/cli/exit-codes.ts'
import { main } from '../core/cli/main.ts'
import { loadCase, loadSuite } from '../core/eval/load.ts'
import { parse } from 'yaml'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')
const doc = (name: string) => readFileSync(join(root, name), 'utf8')

/** Fenced blocks of a language, with their text. */
function blocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1])
}

describe('docs/reference/presets.md', () => {
  const examples = blocks(doc('docs/reference/presets.md'), 'yaml').filter((b) => b.startsWith('# example:'))

  it('has examples to check', () => assert.ok(examples.length >= 5))

  for (const [i, example] of examples.entries()) {
    const expected = example.split('\n')[0].replace('# example:', '').trim()
    it(`example ${i + 1} is ${expected === 'valid' ? 'a valid preset' : `refused with ${expected}`}`, async () => {
      const file = join(tempDir(), 'x.yml')
      writeFileSync(file, example)
      if (expected === 'valid') {
        const app = await Cordage.fromPreset(file)
        await app.stop()
        return
      }
      await assert.rejects(Cordage.fromPreset(file), (error: CordageError) => {
        assert.equal(error.code, expected, error.message)
        return true
      })
    })
  }
})

describe('docs/concepts/threads.md', () => {
  it('runs the example session against the example preset, each command with the exit code it shows', async () => {
    const text = doc('docs/concepts/threads.md')
    const preset = blocks(text, 'yaml').find((b) => b.startsWith('# threads example'))
    assert.ok(preset, 'the page has its example preset')
    const dir = tempDir()
    writeFileSync(join(dir, 'threads.yml'), preset)
    const session = blocks(text, 'sh').find((b) => b.includes('--thread T-1'))!
    const lines = session.split('\n').filter((l) => l.startsWith('cordage '))
    assert.ok(lines.length >= 5)
    for (const line of lines) {
      const [command, comment] = line.split(/\s+# /)
      const expected = Number(/^exit (\d+)/.exec(comment)![1])
      // Words, with "quoted text" as one; the preset is the one written above.
      const argv = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]).slice(1)
      argv[argv.indexOf('threads.yml')] = join(dir, 'threads.yml')
      const out: string[] = []
      const code = await main(argv, { out: (l) => out.push(l), err: (l) => out.push(l) })
      assert.equal(code, expected, `${command}\n${out.join('\n')}`)
      if (comment.includes('thread_closed')) assert.match(out.join('\n'), /thread_closed/)
      if (argv[0] === 'thread') assert.match(out.join('\n'), /^thread T-1 {2}agent support {2}2 turn\(s\) {2}open$/m)
    }
  })
})

describe('docs/concepts/architecture.md', () => {
  it('shows the example phase plugin exactly as it is (test/phases.test.ts runs it)', () => {
    const shown = blocks(doc('docs/concepts/architecture.md'), 'ts').filter((b) => b.startsWith('// file: '))
    assert.equal(shown.length, 1)
    const [first, ...rest] = shown[0].split('\n')
    assert.equal(rest.join('\n'), doc(first.replace('// file: ', '')), `${first} differs from the doc`)
    // Issue 28: a domain plugin intercepts phases in under 30 lines; the page says how many.
    const lines = doc(first.replace('// file: ', '')).trimEnd().split('\n').length
    assert.ok(lines < 30, `the example takes ${lines} lines`)
    assert.match(doc('docs/concepts/architecture.md'), new RegExp(`, in ${lines} lines`))
  })

  it('lists every phase of core/contracts/phases.ts, with its mode, in run order', async () => {
    const { Phases } = await import('../core/contracts/phases.ts')
    const rows = [...doc('docs/concepts/architecture.md').matchAll(/^\| `([a-z]+\/[a-z-]+)` \| (notify|serial|bail) \|/gm)]
    assert.deepEqual(
      rows.map((m) => [m[1], m[2]]),
      Phases.map((p) => [p.name, p.mode]),
    )
  })
})

describe('docs/guides/writing-a-plugin.md', () => {
  const text = doc('docs/guides/writing-a-plugin.md')

  it('shows each file of the example plugin exactly as it is', () => {
    const shown = blocks(text, 'ts').filter((b) => b.startsWith('// file: '))
    assert.equal(shown.length, 4)
    for (const block of shown) {
      const [first, ...rest] = block.split('\n')
      assert.equal(rest.join('\n'), doc(first.replace('// file: ', '')), `${first} differs from the doc`)
    }
    assert.ok(
      blocks(text, 'yaml').includes(doc('docs/examples/returns-desk.yml')),
      'the preset block differs from docs/examples/returns-desk.yml',
    )
  })

  it('runs: a refund waits for approval, then completes with the refund id as evidence', async () => {
    const app = await Cordage.fromPreset(join(root, 'docs/examples/returns-desk.yml'))
    const agent = app.agent('returns')
    const paused = await agent.run('Order O-7 arrived broken. Please refund it.')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    assert.equal(paused.waiting?.actionId, 's2.a1')
    // The refund's preview, recorded with the request: what the person approving it is shown.
    const preview = paused.actions['s2.a1'].preview
    assert.ok(preview?.status === 'ok', JSON.stringify(preview))
    assert.deepEqual(preview.preview.amount, { value: 40, currency: 'EUR' })
    const done = await (await agent.approve(paused.runId, 's2.a1', { by: 'returns-lead' })).done
    assert.equal(done.status, 'COMPLETED')
    const verified = (await agent.store().load(done.runId)).find((e) => e.type === 'verify/end')
    assert.ok(verified?.type === 'verify/end')
    assert.deepEqual(
      verified.data.evidence.map((e) => [e.kind, e.ref]),
      [['receipt', 'RF-1']],
    )
    await app.stop()
  })

  it('runs: a refund over 100 is denied by the preset rule, and an answer naming a refund it did not make fails', async () => {
    const app = await Cordage.fromPreset(join(root, 'docs/examples/returns-desk.yml'))
    await app.swap('returns', 'model-scripted', {
      config: { script: [{ tool: 'issue_refund', args: { orderId: 'O-8', amount: 250 } }, { final: 'Refunded in full (RF-1).' }] },
    })
    const state = await app.agent('returns').run('Refund O-8')
    assert.equal(state.actions['s1.a1'].status, 'denied')
    assert.equal(state.actions['s1.a1'].decision?.ruleId, 'large-refunds')
    assert.equal(state.status, 'FAILED_VERIFICATION')
    assert.match(state.reason ?? '', /RF-1 was not issued in this run/)
    await app.stop()
  })
})

describe('docs/guides/testing.md', () => {
  it('shows the test cordage init writes exactly as it is (test/cli-init.test.ts runs it)', () => {
    const shown = blocks(doc('docs/guides/testing.md'), 'ts').filter((b) => b.startsWith('// file: templates/init/'))
    assert.equal(shown.length, 1)
    const [first, ...rest] = shown[0].split('\n')
    assert.equal(rest.join('\n'), doc(first.replace('// file: ', '')), `${first} differs from the doc`)
  })
})

describe('README', () => {
  const readme = doc('README.md')

  it('gives the two-command quick start, and the scripts it names exist', () => {
    const shell = blocks(readme, 'sh')[0]
    assert.equal(shell.trim(), 'npm install && npm start\nnpm test')
    const scripts = JSON.parse(doc('package.json')).scripts
    assert.ok(scripts.start && scripts.test)
  })

  it('states the same exit codes as the CLI', () => {
    assert.match(
      readme,
      new RegExp(
        `exits ${ExitCodes.ok} only when the run completed: ${ExitCodes.failed} failed, ${ExitCodes.usage} usage or configuration error,\\s+${ExitCodes.failedVerification} failed verification, ${ExitCodes.stopped} stopped by a budget, ${ExitCodes.waiting} waiting \\(for approval or the user\\), ${ExitCodes.cancelled} cancelled,\\s+${ExitCodes.busy} busy`,
      ),
    )
  })
})

describe('docs/reference/events.md', () => {
  it('has one section per event, in catalogue order, and no section for an event that does not exist', () => {
    const headings = [...doc('docs/reference/events.md').matchAll(/^## (\S+\/\S+)$/gm)].map((m) => m[1])
    assert.deepEqual(headings, [...RunEventTypes, ...PluginEventTypes, ...PreviewEventTypes])
  })

  it('says, in each event section, whether a listener can change anything', () => {
    const sections = doc('docs/reference/events.md')
      .split(/^## (?=\S+\/)/m)
      .slice(1)
    for (const section of sections) assert.match(section, /\*\*Notification only\.\*\*/, section.split('\n')[0])
  })
})

describe('docs/reference/errors.md', () => {
  const rows = doc('docs/reference/errors.md')
    .split('\n')
    .filter((l) => /^\| `[a-z_]+` \|/.test(l))

  it('has one row per error code, and no row for a code that does not exist', () => {
    assert.deepEqual(rows.map((r) => r.split('|')[1].trim().replace(/`/g, '')).sort(), Object.keys(Codes).sort())
  })

  it('gives each code the kind and strategy it has in the code', () => {
    for (const row of rows) {
      const [, code, , kind] = row.split('|').map((c) => c.trim())
      const key = code.replace(/`/g, '') as keyof typeof Codes
      assert.equal(kind.split('/')[0].trim(), Codes[key].kind, key)
      assert.equal(kind.split('/')[1].trim(), Kinds[Codes[key].kind], key)
    }
  })
})

describe('docs/reference/cli.md', () => {
  const text = doc('docs/reference/cli.md')

  it('documents every command, and no command that does not exist', () => {
    const headings = [...text.matchAll(/^### (\w+)$/gm)].map((m) => m[1]).filter((h) => !['Readable', 'json'].includes(h))
    assert.deepEqual(
      headings,
      Commands.map((c) => c.name),
    )
    for (const command of Commands) assert.ok(text.includes(command.usage), `docs/reference/cli.md shows the usage line of ${command.name}`)
  })

  it('lists the exit codes the CLI uses', () => {
    const table = [...text.matchAll(/^\| (\d) \|/gm)].map((m) => Number(m[1]))
    assert.deepEqual(table, Object.values(ExitCodes).sort())
  })
})

describe('docs/guides/model-openai.md and docs/guides/model-anthropic.md', () => {
  for (const name of ['model-openai', 'model-anthropic']) {
    const text = doc(`docs/guides/${name}.md`)
    const configSection = text.split('## Config')[1].split('\n## ')[0]

    it(`${name}: the config table lists exactly the plugin's config keys`, async () => {
      const manifest = (await import(`../plugins/${name}/manifest.ts`)).default
      const keys = Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict)
      const documented = [...configSection.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1])
      assert.deepEqual(documented, keys)
    })

    it(`${name}: every example is a config the plugin accepts`, async () => {
      const manifest = (await import(`../plugins/${name}/manifest.ts`)).default
      const examples = blocks(text, 'yaml').filter((b) => b.startsWith(`# ${name} example`))
      assert.ok(examples.length >= 1)
      for (const example of examples) {
        const { model } = parse(example) as { model: { plugin: string; config: Record<string, unknown> } }
        assert.equal(model.plugin, name)
        const known = Object.keys((manifest.config as unknown as { dict: Record<string, unknown> }).dict)
        for (const key of Object.keys(model.config)) assert.ok(known.includes(key), `${name} has no config key ${key}`)
        assert.doesNotThrow(() => manifest.config(model.config), example)
      }
    })
  }
})

describe('docs/reference/services.md', () => {
  it('lists every service contract at its current version, and none that does not exist', () => {
    const rows = [...doc('docs/reference/services.md').matchAll(/^\| `(\w+)` \| `(\w+)Contract` \| ([\d.]+) \|/gm)].map((m) => [m[1], m[3]])
    assert.deepEqual(Object.fromEntries(rows), { ...Contracts })
  })
})

describe('docs/eval.md', () => {
  const examples = blocks(doc('docs/eval.md'), 'yaml').filter((b) => b.startsWith('# example:'))
  /** What the loader says of a case file: no problems, or each as `file:line key: what is wrong`. */
  const problems = (text: string) => {
    const dir = join(tempDir(), 'evals', 'x')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'case.yml'), text)
    const loaded = loadCase(join(dir, 'case.yml'))
    return Array.isArray(loaded) ? loaded : []
  }

  it('has examples to check, valid and refused', () => {
    const kinds = examples.map((e) => e.split('\n')[0].startsWith('# example: valid'))
    assert.ok(kinds.filter(Boolean).length >= 3 && kinds.filter((k) => !k).length >= 5, `${examples.length} examples`)
  })

  for (const [i, example] of examples.entries()) {
    const expected = example.split('\n')[0].replace('# example:', '').trim()
    it(`example ${i + 1} is ${expected === 'valid' ? 'a valid case' : expected}`, () => {
      if (expected === 'valid') return assert.deepEqual(problems(example), [])
      assert.ok(expected.startsWith('refused: '), `"# example: ${expected}" must be "valid" or "refused: PROBLEM"`)
      const found = problems(example)
      assert.ok(
        found.some((p) => p.includes(expected.slice('refused: '.length))),
        `expected a problem with "${expected.slice('refused: '.length)}", found: ${found.join('; ') || 'none'}`,
      )
    })
  }

  it('the project suite in evals/ loads, and each case names a preset that exists', () => {
    const cases = loadSuite(join(root, 'evals'))
    assert.ok(cases.length >= 15, cases.map((c) => c.name).join(', '))
    for (const c of cases) assert.ok(c.preset && existsSync(resolve(dirname(c.file), c.preset)), `${c.shown}: preset ${c.preset} exists`)
  })

  it('lists every case of evals/ in its table of the suite, and no case that is not there', () => {
    const listed = [...doc('docs/eval.md').matchAll(/^\| `([a-z]+\/[a-z-]+)` \|/gm)].map((m) => m[1]).sort()
    const cases = loadSuite(join(root, 'evals'))
      .map((c) => relative(join(root, 'evals'), c.file).replace(/\.ya?ml$/, ''))
      .sort()
    assert.deepEqual(listed, cases)
  })
})

/** The markdown whose relative links must resolve: the README, every page under docs/, and the READMEs of plugins and core's layers. */
function linkedMarkdown(): string[] {
  const under = (dir: string) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md') && !f.split('/').includes('node_modules'))
      .map((f) => join(dir, f))
  const plugins = readdirSync(join(root, 'plugins'))
    .map((p) => join('plugins', p, 'README.md'))
    .filter((f) => existsSync(join(root, f)))
  return ['README.md', ...under('docs'), ...plugins, ...under('core').filter((f) => f.endsWith('/README.md'))]
}

/** A page's text without fenced code blocks, where `# x` is not a heading. */
function uncoded(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
}

/** A page's text without fenced code blocks and inline code, where `[a](b)` is not a link. */
function prose(markdown: string): string {
  return uncoded(markdown).replace(/`[^`\n]*`/g, '')
}

/** The anchors of a page's headings, as GitHub makes them (lower case, punctuation dropped, spaces to hyphens, -1 for a repeat). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, title] of uncoded(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = title
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

/** Each relative link of a markdown file (inline `[text](target)` and `[label]: target`) that does not resolve, with why. */
function brokenLinks(file: string, read: (path: string) => string = (path) => readFileSync(path, 'utf8')): string[] {
  const text = prose(read(join(root, file)))
  const targets = [
    ...[...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((m) => m[1]),
    ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]),
  ]
  const broken: string[] = []
  for (const target of targets) {
    if (/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(target)) continue
    const [path, anchor] = target.split('#', 2)
    const resolved = path === '' ? join(root, file) : resolve(root, dirname(file), decodeURI(path))
    const shown = `${file}: (${target})`
    if (!resolved.startsWith(root + '/') && resolved !== root) broken.push(`${shown} leaves the repository`)
    else if (!existsSync(resolved)) broken.push(`${shown}: no ${relative(root, resolved)}`)
    else if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchors(read(resolved)).has(anchor))
      broken.push(`${shown}: no heading #${anchor} in ${relative(root, resolved)}`)
  }
  return broken
}

describe('links between pages', () => {
  it('resolve: every relative link of the README, docs/, plugins/*/README.md and core/**/README.md names a file that exists, and a heading it has', () => {
    const files = linkedMarkdown()
    assert.ok(files.includes('docs/concepts/architecture.md') && files.includes('core/kernel/README.md'), files.join(', '))
    assert.deepEqual(
      files.flatMap((f) => brokenLinks(f)),
      [],
    )
  })

  it('are checked: a link to a missing page, or to a heading a page does not have, is reported', () => {
    const page = (text: string) => (path: string) => (path === join(root, 'docs/README.md') ? text : readFileSync(path, 'utf8'))
    assert.deepEqual(brokenLinks('docs/README.md', page('[a](concepts/architecture.md#layers) [b](#x)\n\n# X\n')), [])
    assert.deepEqual(brokenLinks('docs/README.md', page('[gone](gone.md)')), ['docs/README.md: (gone.md): no docs/gone.md'])
    assert.deepEqual(brokenLinks('docs/README.md', page('[cli](reference/cli.md#no-such-heading)')), [
      'docs/README.md: (reference/cli.md#no-such-heading): no heading #no-such-heading in docs/reference/cli.md',
    ])
    assert.deepEqual(brokenLinks('docs/README.md', page('```md\n[cli](cli.md)\n```\n`[cli](cli.md)`')), [], 'code is not a link')
  })
})

/**
 * Absolute paths of some machine, which a page copied from a terminal keeps: a checkout under /work/,
 * a home folder (/root/, /home/NAME/, /Users/NAME/), a temp folder (/tmp/NAME), a Windows drive
 * (C:\). Pages write /path/to/… for a path the reader fills in. An address (https://…/work/…) is not one.
 */
function machinePaths(text: string): string[] {
  const found: string[] = []
  const paths = /\/work\/\S*|\/root\/\S*|\/(?:home|Users)\/[^/\s]+\/\S*|\/tmp\/[^/\s`'")\]]+\S*|\b[A-Za-z]:\\\S*/g
  for (const line of text.split('\n'))
    for (const match of line.matchAll(paths)) {
      const before = line.slice(0, match.index)
      if (!/[a-z][a-z0-9+.-]*:\/\/\S*$/i.test(before)) found.push(match[0])
    }
  return found
}

/** Every file under docs/, and every README of the repository (its own, the package's, each folder's). */
function pagesToCheck(): string[] {
  const skip = new Set(['node_modules', '.git', 'tmp', 'dist', 'coverage', 'reports', '.stryker-tmp', '.cordage'])
  const out: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) walk(path)
      } else if (path.startsWith('docs/') || /^README[\w.-]*\.md$/i.test(entry.name)) out.push(path)
    }
  }
  walk('')
  return out
}

describe('pages name no path of the machine they were written on', () => {
  it('docs/ and every README: no /work/, /root/, /home/NAME/, /tmp/NAME or C:\\ path', () => {
    const pages = pagesToCheck()
    assert.ok(
      pages.includes('docs/guides/dev.md') && pages.includes('build/README.package.md') && pages.includes('plugins/policy-rules/README.md'),
    )
    assert.deepEqual(
      pages.flatMap((page) => machinePaths(doc(page)).map((path) => `${page}: ${path}`)),
      [],
    )
  })

  it('finds each kind, and leaves addresses and /path/to/ placeholders alone', () => {
    assert.deepEqual(
      machinePaths(
        [
          'watching ../../work/main/plugins/x',
          'cannot build /tmp/devdemo/dev-policy: /tmp/x/label.ts:1:24',
          'see /root/.npm/_logs and /home/alice/agents/p.yml, /Users/bob/p.yml',
          'C:\\Users\\me\\p.yml',
        ].join('\n'),
      ),
      [
        '/work/main/plugins/x',
        '/tmp/devdemo/dev-policy:',
        '/tmp/x/label.ts:1:24',
        '/root/.npm/_logs',
        '/home/alice/agents/p.yml,',
        '/Users/bob/p.yml',
        'C:\\Users\\me\\p.yml',
      ],
    )
    assert.deepEqual(machinePaths('https://example.com/work/x and /path/to/project/p.yml, $TMPDIR/cordage-x, /tmp/ alone'), [])
  })
})
