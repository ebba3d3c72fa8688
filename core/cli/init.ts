/**
 * @module cli/init
 * `cordage init [DIR]`: a new project that runs and tests out of the box, offline: a preset on the
 * scripted model, a domain plugin in TypeScript (tools, a verifier; policy rules in the preset), its test
 * on `cordage/testing`, and a README. The templates are plain files in templates/init/ (beside core/ in
 * the repository and in the package), copied by a fixed list: whatever else lies in that folder (a
 * database, an .env, node_modules) never reaches a user's project. package.json and .gitignore are
 * written from here, so they name the versions of this cordage. Nothing is ever overwritten, nothing is
 * written through a symbolic link, and a write that fails takes back what was written before it.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

/** Where the templates are: `templates/init` at the package's root, two folders above this file. */
export const TemplatesDir = resolve(import.meta.dirname, '../../templates/init')
/** This cordage's package root. */
const PackageRoot = resolve(import.meta.dirname, '../..')

/** The files of templates/init that a project gets: only these, whatever else is in the folder. */
export const TemplateFiles = [
  'README.md',
  'plugins/bookings/README.md',
  'plugins/bookings/index.ts',
  'plugins/bookings/manifest.ts',
  'plugins/bookings/tools.ts',
  'plugins/bookings/verifier.ts',
  'presets/default.yml',
  'test/bookings.test.ts',
] as const

export async function init({ positionals: [dir = '.'], flags }: Parsed, io: Output): Promise<number> {
  const target = resolve(dir)
  if (existsSync(target) && !statSync(target).isDirectory())
    throw new CordageError('invalid_input', `cordage init ${dir}: ${dir} is a file, not a folder; give a folder (new or empty)`)
  const files = scaffold(target)
  const { links, taken } = obstacles(target, [...files.keys()])
  if (links.length)
    throw new CordageError(
      'invalid_input',
      `cordage init ${dir}: ${links.join(', ')} ${links.length === 1 ? 'is a symbolic link' : 'are symbolic links'}; cordage init writes only into real folders inside ${dir}, never through a link; nothing was written. Remove the link(s), or give a new or empty folder`,
    )
  if (taken.length)
    throw new CordageError(
      'invalid_input',
      `cordage init ${dir}: ${taken.length} file(s) exist and would be overwritten: ${taken.join(', ')}; nothing was written. Give a new or empty folder (cordage init DIR), or move them away`,
    )
  writeAll(target, files, dir)
  const shown = relative(process.cwd(), target) || '.'
  const { steps, note } = nextSteps(target, shown)
  if (flags.json) {
    io.out(JSON.stringify({ dir: target, files: [...files.keys()], next: steps.map(([command]) => command), ...(note ? { note } : {}) }))
    return ExitCodes.ok
  }
  io.out(`created ${files.size} files in ${shown}:`)
  for (const path of files.keys()) io.out(`  ${path}`)
  io.out('')
  io.out('next:')
  const width = Math.max(...steps.map(([command]) => command.length))
  for (const [command, why] of steps) io.out(`  ${why ? `${command.padEnd(width)}  # ${why}` : command}`)
  if (note) io.out(note)
  return ExitCodes.ok
}

/**
 * Symbolic links among the paths inside DIR that init would write or pass through (lstat: a dangling
 * link counts), and files in the way: one that exists, or a file where a folder must be.
 */
export function obstacles(target: string, paths: string[]): { links: string[]; taken: string[] } {
  const links = new Set<string>()
  const taken = new Set<string>()
  for (const path of paths) {
    const parts = path.split('/')
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/')
      let entry
      try {
        entry = lstatSync(join(target, at))
      } catch {
        break
      }
      if (entry.isSymbolicLink()) links.add(at)
      else if (i === parts.length || !entry.isDirectory()) taken.add(at)
      else continue
      break
    }
  }
  return { links: [...links].sort(), taken: [...taken].sort() }
}

/**
 * Writes every file (wx: one that appeared since the check is still not overwritten); on any error,
 * removes the files it wrote and the folders it made, and says what failed.
 */
export function writeAll(
  target: string,
  files: Map<string, string>,
  dir = target,
  write: (file: string, text: string) => void = (file, text) => writeFileSync(file, text, { flag: 'wx' }),
): void {
  const written: string[] = []
  const made: string[] = []
  const folders = new Set<string>()
  try {
    for (const [path, text] of files) {
      folders.add(dirname(join(target, path)))
      const first = mkdirSync(dirname(join(target, path)), { recursive: true })
      if (first) made.push(first)
      write(join(target, path), text)
      written.push(join(target, path))
    }
  } catch (error) {
    for (const file of written) rmSync(file, { force: true })
    // Only folders this call made, deepest first, and only when empty (rmdir refuses otherwise).
    const ours = (folder: string) => made.some((m) => folder === m || folder.startsWith(m + sep))
    for (const folder of [...folders].sort((a, b) => b.length - a.length))
      for (let at = folder; ours(at); at = dirname(at)) {
        try {
          rmdirSync(at)
        } catch {
          break
        }
      }
    const failed = (error as NodeJS.ErrnoException).path
    throw new CordageError(
      'invalid_input',
      `cordage init ${dir}: could not write ${failed ? relative(target, failed) || dir : 'the project'} (${(error as Error).message}); the ${written.length} file(s) written before it were removed, nothing is left. Check the folder's permissions and free space, or give another folder`,
    )
  }
}

/** Every file of the new project, by path relative to it (forward slashes), with its text. */
export function scaffold(target: string, from = TemplatesDir): Map<string, string> {
  if (!existsSync(from))
    throw new CordageError('internal_error', `cordage init: the templates folder ${from} is missing from this installation`)
  const files = new Map<string, string>()
  for (const path of TemplateFiles) {
    if (!existsSync(join(from, path)))
      throw new CordageError('internal_error', `cordage init: the template ${path} is missing from ${from} in this installation`)
    files.set(path, readFileSync(join(from, path), 'utf8'))
  }
  files.set('package.json', `${JSON.stringify(manifest(target), null, 2)}\n`)
  files.set('.gitignore', 'node_modules/\n.cordage/\n')
  return files
}

/**
 * What to run next, with why. cordage is not on the npm registry yet: `npm install` alone would ask the
 * registry for it and fail, so the first step installs it from its tarball, found when this cordage was
 * itself installed from one (the `file:` its project's package.json names).
 */
export function nextSteps(target: string, shown: string, root = PackageRoot): { steps: [command: string, why?: string][]; note?: string } {
  const version = ownPackage(root).version
  const steps: [string, string?][] = []
  let note: string | undefined
  if (shown !== '.') steps.push([`cd ${shown}`])
  const home = installedIn(root)
  const tarball = home && tarballOf(home)
  if (tarball) {
    const path = relative(target, tarball) || tarball
    steps.push([
      `npm install ${path.includes(' ') ? JSON.stringify(path) : path}`,
      'cordage is not on the npm registry yet: from its tarball',
    ])
    if (`${target}${sep}`.startsWith(`${home}${sep}`))
      note = `(node also resolves cordage from ${join(home, 'node_modules', 'cordage')}, in a parent folder; the install above makes the project stand on its own)`
  } else {
    const made = home ? '' : ` (npm pack in ${root} makes it)`
    steps.push([`npm install /path/to/cordage-${version}.tgz`, `cordage is not on the npm registry yet: its tarball${made}`])
  }
  steps.push(['npm test', "the plugin's tests, offline"])
  steps.push(['npx cordage run --preset presets/default.yml', 'a run on the scripted model'])
  return { steps, note }
}

/** The folder whose node_modules holds this cordage, when it is installed (not the repository). */
export function installedIn(root: string): string | undefined {
  const parts = root.split(sep)
  const at = parts.lastIndexOf('node_modules')
  return at > 0 ? parts.slice(0, at).join(sep) || sep : undefined
}

/** The tarball the project in `home` installed cordage from, if its package.json says `file:…tgz` and it is there. */
function tarballOf(home: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(home, 'package.json'), 'utf8'))
    const spec = pkg.dependencies?.cordage ?? pkg.devDependencies?.cordage
    if (typeof spec !== 'string' || !/^file:.*\.tgz$/.test(spec)) return undefined
    const file = resolve(home, spec.slice('file:'.length))
    return existsSync(file) ? file : undefined
  } catch {
    return undefined
  }
}

function ownPackage(root = PackageRoot) {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
}

/** The new project's package.json: cordage and what its plugin imports, at the ranges this cordage uses. */
function manifest(target: string) {
  const own = ownPackage()
  const range = (name: string) => {
    const found = own.dependencies?.[name]
    if (typeof found !== 'string')
      throw new CordageError('internal_error', `cordage init: this cordage's package.json has no dependency ${name}`)
    return found
  }
  return {
    name: packageName(basename(target)),
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      start: 'cordage run --preset presets/default.yml',
      test: 'node --import tsx --test test/*.test.ts',
    },
    dependencies: { cordage: `^${own.version}`, cordis: range('cordis'), zod: range('zod') },
    devDependencies: { tsx: range('tsx') },
    // npm 11 asks before running install scripts: these build the SQLite driver and fetch esbuild's binary.
    allowScripts: { 'better-sqlite3': true, esbuild: true },
  }
}

/** The folder's name as an npm package name (lower case, no spaces), or `my-agents`. */
export function packageName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '')
  return name.slice(0, 214) || 'my-agents'
}
