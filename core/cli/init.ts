/**
 * @module cli/init
 * `cordage init [DIR]`: a new project that runs and tests out of the box, offline: a preset on the
 * scripted model, a domain plugin in TypeScript (tools, a verifier; policy rules in the preset), its test
 * on `cordage/testing`, and a README. The templates are plain files in templates/init/ (beside core/ in
 * the repository and in the package); package.json and .gitignore are written from here, so they name
 * the versions of this cordage. Nothing is ever overwritten: one existing file and nothing is written.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

/** Where the templates are: `templates/init` at the package's root, two folders above this file. */
export const TemplatesDir = resolve(import.meta.dirname, '../../templates/init')

export async function init({ positionals: [dir = '.'] }: Parsed, io: Output): Promise<number> {
  const target = resolve(dir)
  if (existsSync(target) && !statSync(target).isDirectory())
    throw new CordageError('invalid_input', `cordage init ${dir}: ${dir} is a file, not a folder; give a folder (new or empty)`)
  const files = scaffold(target)
  const taken = [...files.keys()].filter((path) => existsSync(join(target, path))).sort()
  if (taken.length)
    throw new CordageError(
      'invalid_input',
      `cordage init ${dir}: ${taken.length} file(s) exist and would be overwritten: ${taken.join(', ')}; nothing was written. Give a new or empty folder (cordage init DIR), or move them away`,
    )
  for (const [path, text] of files) {
    mkdirSync(dirname(join(target, path)), { recursive: true })
    // wx: a file that appeared since the check is still not overwritten.
    writeFileSync(join(target, path), text, { flag: 'wx' })
  }
  const shown = relative(process.cwd(), target) || '.'
  io.out(`created ${files.size} files in ${shown}:`)
  for (const path of files.keys()) io.out(`  ${path}`)
  io.out('')
  io.out('next:')
  if (shown !== '.') io.out(`  cd ${shown}`)
  io.out('  npm install')
  io.out("  npm test                                    # the plugin's tests, offline")
  io.out('  npx cordage run --preset presets/default.yml  # a run on the scripted model')
  return ExitCodes.ok
}

/** Every file of the new project, by path relative to it (forward slashes), with its text. */
export function scaffold(target: string): Map<string, string> {
  if (!existsSync(TemplatesDir))
    throw new CordageError('internal_error', `cordage init: the templates folder ${TemplatesDir} is missing from this installation`)
  const files = new Map<string, string>()
  const walk = (from: string) => {
    for (const name of readdirSync(join(TemplatesDir, from)).sort()) {
      const path = from ? `${from}/${name}` : name
      if (statSync(join(TemplatesDir, path)).isDirectory()) walk(path)
      else files.set(path, readFileSync(join(TemplatesDir, path), 'utf8'))
    }
  }
  walk('')
  files.set('package.json', `${JSON.stringify(manifest(target), null, 2)}\n`)
  files.set('.gitignore', 'node_modules/\n.cordage/\n')
  return files
}

/** The new project's package.json: cordage and what its plugin imports, at the ranges this cordage uses. */
function manifest(target: string) {
  const own = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8'))
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
