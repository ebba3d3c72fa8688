/**
 * What build/dist.ts copies into dist/ besides tsc's output: the files a user or the code reads at run
 * time (plugins' READMEs and changelogs, presets, templates, the playground's static files, the docs).
 *
 * Only files git tracks, when the source is a git checkout: a developer's `.env`, a run's
 * `.cordage/cordage.db` or a `debug.log` lying in the tree must never reach the tarball. Whatever the
 * source, a path that looks like a secret or local state is refused as well (see `refused`), so a copy
 * without `.git` fails closed too. See docs/decisions/0016-publish-dist.md.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The package manifest's `files`: what npm packs from dist/. Source maps point at sources not shipped. */
export const packageFiles = ['core', 'plugins', 'playground', 'presets', 'templates', 'docs', 'CHANGELOG.md', '!**/*.map']

/** Folders whose non-compiled files ship, and which of their files do. */
const sources: { folder: string; ships: (path: string) => boolean }[] = [
  // TypeScript there is compiled by tsc (declarations aside); plugins' tests stay behind.
  { folder: 'plugins', ships: (path) => !isTypeScript(path) && !/^plugins\/[^/]+\/test\//.test(path) },
  { folder: 'playground', ships: (path) => !isTypeScript(path) },
  { folder: 'core/host', ships: (path) => path === 'core/host/shared-modules-hook.mjs' },
  { folder: 'presets', ships: () => true },
  // `cordage init` copies these into a new project: TypeScript the user's project runs, not compiled here.
  { folder: 'templates', ships: () => true },
  // The guides and references, so the package README's links work offline; examples are the repository's.
  { folder: 'docs', ships: (path) => path.endsWith('.md') },
]

function isTypeScript(path: string) {
  return /\.(m?ts|tsx)$/.test(path) && !path.endsWith('.d.ts')
}

/**
 * A path that is a secret or local state, never shipped even when tracked: dotfiles and dot-folders
 * (`.env`, `.cordage/`, `.npmrc`), `node_modules/`, databases and logs.
 */
export function refused(path: string): boolean {
  const parts = path.split('/')
  if (parts.some((part) => part.startsWith('.') || part === 'node_modules')) return true
  return /\.(db|db-wal|db-shm|db-journal|sqlite|sqlite3|log|pem|key|tgz)$/i.test(path)
}

/** Files under `folder`, relative to `root`: tracked ones in a git checkout, all of them otherwise. */
export function listFiles(root: string, folder: string): string[] {
  if (!existsSync(join(root, folder))) return []
  if (isGitCheckout(root)) {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--', folder], { cwd: root, encoding: 'utf8' })
    // A tracked file deleted in the work tree (not yet committed) is not there to copy.
    return out.split('\0').filter((path) => path && existsSync(join(root, path)))
  }
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir)).flatMap((name) => {
      const path = `${dir}/${name}`
      return statSync(join(root, path)).isDirectory() ? walk(path) : [path]
    })
  return walk(folder)
}

/** Whether `root` is the top of a git work tree (not merely a folder inside someone else's). */
function isGitCheckout(root: string): boolean {
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    return realpathSync(top.trim()) === realpathSync(root)
  } catch {
    return false
  }
}

/** Copies every shipped non-compiled file from `root` to `out`; returns their paths. */
export function copyAssets(root: string, out: string): string[] {
  const copied: string[] = []
  for (const { folder, ships } of sources) {
    for (const path of listFiles(root, folder)) {
      if (!ships(path) || refused(path)) continue
      mkdirSync(dirname(join(out, path)), { recursive: true })
      cpSync(join(root, path), join(out, path))
      copied.push(path)
    }
  }
  return copied
}
