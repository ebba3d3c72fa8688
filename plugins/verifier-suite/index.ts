import { resolve } from 'node:path'
import { CordageError, definePlugin, readService, type WorkspaceService } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { buildCheck, needsWorkspace } from './build.ts'
import { parseCheckTree } from './config.ts'
import { SuiteVerifier } from './suite-verifier.ts'

export { SuiteVerifier } from './suite-verifier.ts'
export { buildCheck } from './build.ts'
export { parseCheckTree } from './config.ts'
export { SealedFeedback } from './check.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const spec = parseCheckTree(config)
  // The workspace is read when a check runs, not now: it is optional, and may be swapped meanwhile.
  const workspace = () => readService<WorkspaceService>(ctx, 'workspace')?.value
  if (needsWorkspace(spec) && !workspace()) {
    throw new CordageError(
      'plugin_config_invalid',
      'verifier-suite: a command check without cwd runs in the run\'s workspace, and this agent has no plugin that provides "workspace" (add workspace-local, or give the check a cwd)',
    )
  }
  const root = buildCheck(spec, {
    resolveCwd: (cwd) => resolve(ctx.baseDir, cwd),
    workspaceDir: async (runId) => {
      const service = workspace()
      if (!service)
        throw new CordageError(
          'service_missing',
          'verifier-suite: a command check runs in the run\'s workspace, and no plugin provides "workspace" now',
        )
      return service.dir(runId)
    },
  })
  ctx.set('verifier', new SuiteVerifier(root))
})
