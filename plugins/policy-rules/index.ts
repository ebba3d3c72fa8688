import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { RulePolicy } from './rules.ts'

export { RulePolicy } from './rules.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const ids = new Set<string>()
  for (const rule of config.rules) {
    if (ids.has(rule.id)) throw new CordageError('plugin_config_invalid', `policy-rules: rule id "${rule.id}" is used twice; ids name decisions in the record and must be unique`)
    ids.add(rule.id)
    if (rule.match.args) for (const [path, m] of Object.entries(rule.match.args)) {
      if (typeof m === 'object' && m !== null && m.regex !== undefined) {
        try { new RegExp(m.regex) } catch (error) {
          throw new CordageError('plugin_config_invalid', `policy-rules: rule "${rule.id}" match.args.${path}.regex is not a valid regular expression: ${(error as Error).message}`)
        }
      }
    }
  }
  ctx.set('policy', new RulePolicy(config, manifest.version))
})
