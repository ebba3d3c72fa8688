import { checkArgsPattern, CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { RulePolicy } from './rules.ts'
import { checkConstraints } from './constraints.ts'

export { RulePolicy } from './rules.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const ids = new Set<string>()
  for (const rule of config.rules) {
    if (ids.has(rule.id))
      throw new CordageError(
        'plugin_config_invalid',
        `policy-rules: rule id "${rule.id}" is used twice; ids name decisions in the record and must be unique`,
      )
    ids.add(rule.id)
    const problem = rule.match.args && checkArgsPattern(rule.match.args)
    if (problem) throw new CordageError('plugin_config_invalid', `policy-rules: rule "${rule.id}" match.args.${problem}`)
    if (rule.approvers && rule.verdict !== 'ask')
      throw new CordageError(
        'plugin_config_invalid',
        `policy-rules: rule "${rule.id}" names approvers but its verdict is ${rule.verdict}; approvers only matter for ask`,
      )
    if (rule.constraints !== undefined) {
      const checked = checkConstraints(rule.constraints, rule.verdict)
      if (typeof checked === 'string') throw new CordageError('plugin_config_invalid', `policy-rules: rule "${rule.id}" ${checked}`)
      rule.constraints = checked
    }
  }
  ctx.set('policy', new RulePolicy({ ...config, environment: config.environment ?? process.env.CORDAGE_ENV }, manifest.version))
})
