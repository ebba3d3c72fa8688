import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { editFileTool } from './edit-file.ts'
import { listFilesTool, readFileTool } from './read-files.ts'
import { runTestsTool } from './run-tests.ts'
import { searchTool } from './search-files.ts'

export { resolveInside } from './workspace-path.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Never a shell by accident: a string is a shell script, so it has to say so.
  if ((typeof config.test.run === 'string') !== config.test.shell) {
    throw new CordageError(
      'plugin_config_invalid',
      'coding-tools: test.run is a shell script (a string) only with test.shell: true; otherwise give an argument list such as [node, --test]',
    )
  }
  if (Array.isArray(config.test.run) && config.test.run.length === 0)
    throw new CordageError('plugin_config_invalid', 'coding-tools: test.run is empty')
  const dirOf = (runId: string) => ctx.workspace.dir(runId)
  for (const tool of [readFileTool, listFilesTool, searchTool, editFileTool, runTestsTool]) ctx.tools.register(tool(dirOf, config))
})
