/**
 * The `workspace` service on the local disk: `<root>/<runId>`. The path depends only on the root and the
 * run id, so every process of the machine that loads the same preset finds the same directory, and a run
 * resumed elsewhere finds its files.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { WorkspaceService } from 'cordage'
import { createFilled } from './fill.ts'
import { checkRunId } from './run-id.ts'

export class LocalWorkspace implements WorkspaceService {
  /** Creations in flight in this process, so two calls for one run copy the template once. */
  private creating = new Map<string, Promise<string>>()

  /** `root` and `template` are absolute paths. */
  constructor(
    readonly root: string,
    readonly template?: string,
  ) {}

  /** The directory of the run, without creating it. Throws `invalid_input` for a run id that could escape the root. */
  pathOf(runId: string): string {
    return join(this.root, checkRunId(runId))
  }

  dir(runId: string): Promise<string> {
    let path: string
    try {
      path = this.pathOf(runId)
    } catch (error) {
      return Promise.reject(error)
    }
    let pending = this.creating.get(path)
    if (!pending) {
      pending = createFilled(this.root, path, runId, this.template).then(() => path)
      this.creating.set(path, pending)
      // Forget it once settled: a removed workspace is created again on the next call.
      const forget = () => {
        this.creating.delete(path)
      }
      pending.then(forget, forget)
    }
    return pending
  }

  /**
   * Remove the run's directory. Synchronous on purpose: it runs from a `run/end` listener, and a CLI
   * process exits right after the run ends, which would cut an asynchronous removal short.
   */
  remove(runId: string): void {
    rmSync(this.pathOf(runId), { recursive: true, force: true })
  }
}
