import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { expand, loadScript } from './script.ts'
import { ScriptedModel } from './scripted-model.ts'

export { ScriptedModel, type RecordedRequest } from './scripted-model.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const entries = expand(loadScript(config.script, config.file, ctx.baseDir))
  ctx.set('model', new ScriptedModel(entries, config))
})
