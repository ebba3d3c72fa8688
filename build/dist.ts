/**
 * npm run build — the package as compiled JavaScript in dist/: what `bin` and the exports point at once
 * it is installed, so neither the CLI nor an embedding application needs tsx at run time.
 *
 * dist/ is a complete package folder (its own package.json, presets, the playground's static files, the
 * plugins' READMEs and changelogs), laid out like the repository so every path the code computes from
 * `import.meta.dirname` (the built-in plugins folder, the playground's public folder) holds. The
 * repository itself keeps running its TypeScript through tsx: its tests and `core/cli/bin.js` are
 * unchanged. See docs/decisions/0015-compiled-dist.md.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
// `--out DIR` builds elsewhere (a test's own folder, so tests that build at once do not share dist/).
const outFlag = process.argv.indexOf('--out')
if (outFlag >= 0 && !process.argv[outFlag + 1]) throw new Error('build: --out needs a folder')
const out = outFlag < 0 ? join(root, 'dist') : resolve(process.argv[outFlag + 1])

rmSync(out, { recursive: true, force: true })
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], {
  stdio: 'inherit',
})

/** Files tsc does not emit that the code or a user reads at run time. Plugin tests stay behind. */
function copyAssets(from: string) {
  for (const name of readdirSync(join(root, from))) {
    const path = join(from, name)
    if (statSync(join(root, path)).isDirectory()) {
      if (name !== 'test' && name !== 'node_modules') copyAssets(path)
    } else if (!/\.(m?ts|tsx)$/.test(name) || name.endsWith('.d.ts')) {
      mkdirSync(dirname(join(out, path)), { recursive: true })
      cpSync(join(root, path), join(out, path))
    }
  }
}
copyAssets('plugins')
copyAssets('playground')
cpSync(join(root, 'core/host/shared-modules-hook.mjs'), join(out, 'core/host/shared-modules-hook.mjs'))
cpSync(join(root, 'presets'), join(out, 'presets'), { recursive: true, filter: (src) => !src.includes('node_modules') })
cpSync(join(root, 'README.md'), join(out, 'README.md'))
// `cordage init` copies these into a new project: TypeScript the user's project runs, not compiled here.
cpSync(join(root, 'templates'), join(out, 'templates'), { recursive: true })

// The compiled executable: the repository's core/cli/bin.js registers tsx first; this one does not.
writeFileSync(
  join(out, 'core/cli/bin.js'),
  readFileSync(join(root, 'core/cli/bin.js'), 'utf8')
    .replace(
      /^\/\/ The `cordage` executable:.*\n/m,
      '// The `cordage` executable, compiled: plain JavaScript, no TypeScript loader at start.\n',
    )
    .replace(/^import \{ register \} from 'tsx\/esm\/api'\n\nregister\(\)\n/m, '')
    .replace("import('./main.ts')", "import('./main.js')"),
  { mode: 0o755 },
)

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const compiled = (source: string) => `./${source.replace(/^\.\//, '').replace(/\.ts$/, '.js')}`
const exports: Record<string, unknown> = {}
for (const [key, source] of Object.entries(pkg.exports as Record<string, string>)) {
  exports[key] = source.endsWith('.ts') ? { types: compiled(source).replace(/\.js$/, '.d.ts'), default: compiled(source) } : source
}
// The published package (docs/decisions/0016-publish-dist.md): not private, unlike the repository's
// manifest, which guards the sources against `npm publish`. Source maps stay in dist/ for debugging
// here but not in the tarball: they point at TypeScript sources the package does not ship.
const manifest = {
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  keywords: pkg.keywords,
  repository: pkg.repository,
  license: pkg.license,
  type: pkg.type,
  engines: pkg.engines,
  bin: pkg.bin,
  exports,
  files: ['core', 'plugins', 'playground', 'presets', 'templates', '!**/*.map'],
  dependencies: pkg.dependencies,
}
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)

for (const [key, target] of Object.entries(exports)) {
  const file = typeof target === 'string' ? target : (target as { default: string }).default
  if (!existsSync(join(out, file))) throw new Error(`build: export ${key} points at ${file}, which the build did not write`)
}
console.log(`dist/ written: ${relative(process.cwd(), out) || '.'} (exports ${Object.keys(exports).join(', ')})`)
