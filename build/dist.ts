/**
 * npm run build — the package as compiled JavaScript in dist/: what `bin` and the exports point at once
 * it is installed, so neither the CLI nor an embedding application needs tsx at run time.
 *
 * dist/ is a complete package folder (its own package.json and README, presets, the playground's static
 * files, the plugins' READMEs and changelogs, the docs; build/assets.ts says which files and why), laid out like the repository so every path the code computes from
 * `import.meta.dirname` (the built-in plugins folder, the playground's public folder) holds. The
 * repository itself keeps running its TypeScript through tsx: its tests and `core/cli/bin.js` are
 * unchanged. See docs/decisions/0015-compiled-dist.md.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { copyAssets, packageFiles } from './assets.ts'

const root = resolve(import.meta.dirname, '..')
// `--out DIR` builds elsewhere (a test's own folder, so tests that build at once do not share dist/).
const outFlag = process.argv.indexOf('--out')
if (outFlag >= 0 && !process.argv[outFlag + 1]) throw new Error('build: --out needs a folder')
const out = outFlag < 0 ? join(root, 'dist') : resolve(process.argv[outFlag + 1])

rmSync(out, { recursive: true, force: true })
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], {
  stdio: 'inherit',
})

copyAssets(root, out)
// The package's own README: the repository's speaks of cloning, `npm test` and files the package lacks.
cpSync(join(root, 'build/README.package.md'), join(out, 'README.md'))
// What changed, and which configuration became an error in which version: linked from the docs.
cpSync(join(root, 'CHANGELOG.md'), join(out, 'CHANGELOG.md'))

// The compiled executable: the repository's core/cli/bin.js registers tsx first; this one does not.
// Each change must apply: a bin.js that still registered tsx would fail in an install without it.
const edits: [RegExp | string, string][] = [
  [/^\/\/ The `cordage` executable:.*\n/m, '// The `cordage` executable, compiled: plain JavaScript, no TypeScript loader at start.\n'],
  [/^ *const \{ register \} = await import\('tsx\/esm\/api'\)\n *register\(\)\n/m, ''],
  ["import('./main.ts')", "import('./main.js')"],
]
let executable = readFileSync(join(root, 'core/cli/bin.js'), 'utf8')
for (const [from, to] of edits) {
  const edited = executable.replace(from, to)
  if (edited === executable) throw new Error(`build: core/cli/bin.js no longer has ${String(from)}; update build/dist.ts`)
  executable = edited
}
writeFileSync(join(out, 'core/cli/bin.js'), executable, { mode: 0o755 })

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const compiled = (source: string) => `./${source.replace(/^\.\//, '').replace(/\.ts$/, '.js')}`
const exports: Record<string, unknown> = {}
for (const [key, source] of Object.entries(pkg.exports as Record<string, string>)) {
  exports[key] = source.endsWith('.ts') ? { types: compiled(source).replace(/\.js$/, '.d.ts'), default: compiled(source) } : source
}
// The published package (docs/decisions/0016-publish-dist.md): not private, unlike the repository's
// manifest, which guards the sources against `npm publish`. `repository` and `homepage` only once the
// project has a public address (it has none yet); undefined fields are left out of the JSON.
const manifest = {
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  keywords: pkg.keywords,
  repository: pkg.repository,
  homepage: pkg.homepage,
  license: pkg.license,
  type: pkg.type,
  engines: pkg.engines,
  bin: pkg.bin,
  exports,
  files: packageFiles,
  dependencies: pkg.dependencies,
}
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)

for (const [key, target] of Object.entries(exports)) {
  const file = typeof target === 'string' ? target : (target as { default: string }).default
  if (!existsSync(join(out, file))) throw new Error(`build: export ${key} points at ${file}, which the build did not write`)
}
console.log(`dist/ written: ${relative(process.cwd(), out) || '.'} (exports ${Object.keys(exports).join(', ')})`)
