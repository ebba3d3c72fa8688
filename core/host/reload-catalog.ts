/**
 * @module host/reload-catalog
 * The catalogue as one swap sees it when a plugin folder was rebuilt: the rebuilt entry stands in for
 * the installed one of that folder, everything else is the host's catalogue. The agent's plan is then
 * checked exactly as a preset entry is (version range, config, requirements in both directions).
 */
import { semver } from './semver.ts'
import { CordageError } from '../contracts/errors.ts'
import { PluginCatalog, type CatalogEntry } from './catalog.ts'

export class RebuiltCatalog extends PluginCatalog {
  constructor(
    private readonly base: PluginCatalog,
    private readonly rebuilt: CatalogEntry,
  ) {
    super()
  }

  override find(name: string, range: string): CatalogEntry {
    if (name !== this.rebuilt.manifest.name) return this.base.find(name, range)
    if (!semver.satisfies(this.rebuilt.manifest.version, range)) {
      throw new CordageError(
        'plugin_version_unsatisfiable',
        `the rebuilt plugin at ${this.rebuilt.dir} is ${name}@${this.rebuilt.manifest.version}, which does not satisfy ${range}`,
      )
    }
    return this.rebuilt
  }

  override read(names?: Iterable<string>): Promise<void> {
    return this.base.read(names)
  }

  override get whole(): boolean {
    return this.base.whole
  }

  override async addFolder(dir: string): Promise<CatalogEntry> {
    return dir === this.rebuilt.dir ? this.rebuilt : this.base.addFolder(dir)
  }

  override add(): void {
    throw new Error('a RebuiltCatalog is read-only')
  }

  override providersOf(service: string): CatalogEntry[] {
    return this.base.providersOf(service)
  }

  override entries(): CatalogEntry[] {
    return this.base.entries()
  }
}
