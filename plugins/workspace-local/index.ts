import { statSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { keepsWorkspace } from './keep.ts'
import { LocalWorkspace } from './local-workspace.ts'
import { tempRoot } from './temp-root.ts'

export { LocalWorkspace } from './local-workspace.ts'
export { checkRunId } from './run-id.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  if (config.temporary && config.root) {
    throw new CordageError('plugin_config_invalid', 'workspace-local: give root or temporary: true, not both')
  }
  // Unset, the root sits beside the default store (`.cordage/` of the working directory), so the
  // processes that share the store share the workspaces; a configured root follows the preset.
  const root = config.temporary ? tempRoot() : config.root ? resolve(ctx.baseDir, config.root) : resolve('.cordage/workspaces')
  const template = config.template ? resolve(ctx.baseDir, config.template) : undefined
  if (template) checkTemplate(template, root)
  const workspace = new LocalWorkspace(root, template)
  ctx.set('workspace', workspace)

  if (config.keep !== 'always') {
    ctx.on('run/end', (event) => {
      if (keepsWorkspace(config.keep, event.data.status)) return
      try {
        workspace.remove(event.runId)
      } catch {
        // A workspace that cannot be removed is left behind, never a reason to disturb the run's end.
      }
    })
  }
})

function checkTemplate(template: string, root: string): void {
  let isDir = false
  try {
    isDir = statSync(template).isDirectory()
  } catch {
    /* reported below */
  }
  if (!isDir) throw new CordageError('plugin_config_invalid', `workspace-local: template ${template} is not a folder`)
  const path = relative(template, root)
  const outside = path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)
  // A root inside the template would copy every earlier workspace into each new one.
  if (!outside) {
    throw new CordageError(
      'plugin_config_invalid',
      `workspace-local: root ${root} is inside the template ${template}; put the workspaces elsewhere`,
    )
  }
}
