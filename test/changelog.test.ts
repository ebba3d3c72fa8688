/**
 * CHANGELOG.md's "Stricter configuration" tables, kept honest where a machine can tell (issue 27):
 * every row names a version that exists (the package's own, or one of that plugin's versions: in its
 * CHANGELOG, its manifest, or its manifest's history), error codes that exist in
 * core/contracts/errors.ts, and, for a plugin, keys its own CHANGELOG mentions under that version; the
 * commits a row cites exist and carry the date it gives; a plugin CHANGELOG that speaks of a stricter
 * configuration has a row in the table. What each rule refuses, and that its message names the fix, is
 * tested where the rule lives (test/security/typos.test.ts, test/cli.test.ts, the plugins' tests).
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Codes } from 'cordage'

const root = resolve(import.meta.dirname, '..')
const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')
const packageVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
const plugins = new Set(readdirSync(join(root, 'plugins')).filter((d) => existsSync(join(root, 'plugins', d, 'manifest.ts'))))

interface Row {
  line: string
  since: string
  where: string
  refused: string
  code: string
  fix: string
}

/** The rows of every table in the "Stricter configuration" section of [Unreleased]. */
function stricterRows(text: string): Row[] {
  const start = text.indexOf('\n### Stricter configuration\n')
  assert.ok(start >= 0, 'CHANGELOG.md has a "### Stricter configuration" section')
  const rest = text.slice(start + 1)
  const end = rest.search(/\n#{1,3} /)
  const section = end < 0 ? rest : rest.slice(0, end)
  const rows: Row[] = []
  for (const line of section.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| Since ') || line.startsWith('| ---')) continue
    const cells = line
      .slice(2, -2)
      .split(' | ')
      .map((c) => c.trim())
    assert.equal(cells.length, 5, `a row has five cells (Since, Where, Now refused, Code, Write instead): ${line}`)
    const [since, where, refused, code, fix] = cells
    rows.push({ line, since, where, refused, code, fix })
  }
  return rows
}

const Since =
  /^(?<pkg>[a-z][a-z0-9-]*) (?<version>\d+\.\d+\.\d+|Unreleased), (?<date>\d{4}-\d{2}-\d{2}) \((?<commits>[0-9a-f]{7}(?:, [0-9a-f]{7})*)\)/

function sinceOf(row: Row) {
  const m = Since.exec(row.since)
  assert.ok(m?.groups, `"Since" reads "PACKAGE VERSION, YYYY-MM-DD (COMMIT, ...)": ${row.since}`)
  return { pkg: m.groups.pkg, version: m.groups.version, date: m.groups.date, commits: m.groups.commits.split(', ') }
}

/** Backticked spans of a cell. */
const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1])

const pluginChangelog = (name: string) => readFileSync(join(root, 'plugins', name, 'CHANGELOG.md'), 'utf8')

/** The text under `## VERSION` (or `## [VERSION]`); a version without a heading of its own is listed under Unreleased. */
function sectionOf(text: string, version: string): string {
  const headings = [...text.matchAll(/^## \[?([^\]\n]+?)\]?(?: .*)?$/gm)]
  const at = headings.findIndex((h) => h[1] === version)
  const pick = at >= 0 ? at : headings.findIndex((h) => h[1] === 'Unreleased')
  if (pick < 0) return ''
  const from = headings[pick].index!
  const to = headings[pick + 1]?.index ?? text.length
  return text.slice(from, to)
}

const git = existsSync(join(root, '.git'))
  ? (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  : undefined

/** Every version a plugin has had: its CHANGELOG's headings and `- 1.1.0:` entries, its manifest now and, in a checkout, before. */
function versionsOf(name: string): Set<string> {
  const text = pluginChangelog(name)
  const versions = new Set<string>(['Unreleased'].filter((v) => new RegExp(`^## \\[?${v}`, 'm').test(text)))
  for (const m of text.matchAll(/^## \[?(\d+\.\d+\.\d+)/gm)) versions.add(m[1])
  for (const m of text.matchAll(/^- (\d+\.\d+\.\d+):/gm)) versions.add(m[1])
  const manifestVersion = (source: string) => /\bversion: '(\d+\.\d+\.\d+)'/.exec(source)?.[1]
  const now = manifestVersion(readFileSync(join(root, 'plugins', name, 'manifest.ts'), 'utf8'))
  if (now) versions.add(now)
  if (git) {
    // --diff-filter=d: a commit that removed the file (policy-rules 1.x moving to policy-rules-v1) has no version to read.
    for (const commit of git(['log', '--diff-filter=d', '--format=%H', '--', `plugins/${name}/manifest.ts`])
      .split('\n')
      .filter(Boolean)) {
      const then = manifestVersion(git(['show', `${commit}:plugins/${name}/manifest.ts`]))
      if (then) versions.add(then)
    }
  }
  return versions
}

const rows = stricterRows(changelog)

describe('CHANGELOG.md: stricter configuration', () => {
  it('has rows, each with a version, where, what is refused, a code and the fix', () => {
    assert.ok(rows.length >= 20, `${rows.length} rows`)
    for (const row of rows) {
      for (const [name, cell] of Object.entries({ where: row.where, refused: row.refused, fix: row.fix }))
        assert.ok(cell.length > 0, `${name} is empty: ${row.line}`)
      sinceOf(row)
    }
  })

  it('names only error codes that exist in core/contracts/errors.ts', () => {
    for (const row of rows) {
      const codes = spans(row.code)
      assert.ok(codes.length > 0, `no code in: ${row.line}`)
      for (const code of codes)
        assert.ok(Object.hasOwn(Codes, code), `"${code}" is not an error code (core/contracts/errors.ts): ${row.line}`)
    }
  })

  it("names the package's own version, or a version the plugin has had", () => {
    const known = new Map<string, Set<string>>()
    for (const row of rows) {
      const { pkg, version } = sinceOf(row)
      if (pkg === 'cordage') {
        assert.equal(version, packageVersion, `cordage ${version} is not package.json's version: ${row.line}`)
        continue
      }
      assert.ok(plugins.has(pkg), `no plugin "${pkg}" in plugins/: ${row.line}`)
      if (!known.has(pkg)) known.set(pkg, versionsOf(pkg))
      assert.ok(known.get(pkg)!.has(version), `${pkg} has had no version ${version} (${[...known.get(pkg)!].join(', ')}): ${row.line}`)
    }
  })

  it('gives a plugin only rules its own CHANGELOG mentions under that version (each key of Where, in backticks)', () => {
    for (const row of rows) {
      const { pkg, version } = sinceOf(row)
      if (pkg === 'cordage') continue
      const section = sectionOf(pluginChangelog(pkg), version)
      assert.ok(section, `plugins/${pkg}/CHANGELOG.md has no section for ${version}: ${row.line}`)
      const mentioned = spans(section)
      for (const key of spans(row.where)) {
        assert.ok(
          mentioned.some((m) => m === key || m.startsWith(`${key}.`) || m.startsWith(`${key}[`)),
          `plugins/${pkg}/CHANGELOG.md does not mention \`${key}\` under ${version}: ${row.line}`,
        )
      }
    }
  })

  it('has a row for each plugin whose CHANGELOG speaks of a stricter configuration', () => {
    const listed = new Set(rows.map((r) => sinceOf(r).pkg))
    for (const name of plugins)
      if (/stricter configuration/i.test(pluginChangelog(name)))
        assert.ok(listed.has(name), `plugins/${name}/CHANGELOG.md lists a stricter configuration that CHANGELOG.md does not`)
  })

  it("links only to files that exist (each plugin's own changelog)", () => {
    const links = [...changelog.matchAll(/\]\((?!https?:)([^)#]+)/g)].map((m) => m[1])
    assert.ok(links.length >= plugins.size, `${links.length} links`)
    for (const link of links) assert.ok(existsSync(join(root, link)), `CHANGELOG.md links to ${link}, which does not exist`)
    for (const name of plugins)
      assert.ok(links.includes(`plugins/${name}/CHANGELOG.md`), `CHANGELOG.md does not link to plugins/${name}/CHANGELOG.md`)
  })

  it('cites commits that exist, the first of them on the date the row gives', { skip: git ? false : 'not a git checkout' }, () => {
    for (const row of rows) {
      const { date, commits } = sinceOf(row)
      for (const commit of commits)
        assert.doesNotThrow(() => git!(['cat-file', '-e', `${commit}^{commit}`]), `no commit ${commit}: ${row.line}`)
      assert.equal(git!(['show', '-s', '--format=%as', commits[0]]), date, `commit ${commits[0]} is not of ${date}: ${row.line}`)
    }
  })
})
