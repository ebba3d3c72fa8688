import { CordageError, definePlugin, safeRegex, type SafeRegex } from 'cordage'
import { BuiltinNames } from './detectors.ts'
import { compileGuards, Guardrails } from './guard.ts'
import manifest, { patternProblem, type Config } from './manifest.ts'

export { Guardrails, compileGuards, stringsOf } from './guard.ts'
export { Builtins, cardBrand, isCardNumber, isIban, luhn } from './detectors.ts'
export { patternProblem } from './manifest.ts'

const DetectorKeys = ['enabled', 'stages', 'action', 'replacement']

/**
 * The checks the schema cannot make, each naming the guard it is about: a pattern that does not
 * compile on the linear-time engine or matches the empty string (the schema refuses those already;
 * checked again for callers that skip it), a name used twice, an exemption naming no detector.
 * Returns the compiled patterns by name.
 */
export function checkConfig(config: Config): Map<string, SafeRegex> {
  const invalid = (message: string) => new CordageError('plugin_config_invalid', `guardrails: ${message}`)
  for (const name of BuiltinNames) {
    const setting = config.detectors[name]
    // The host reports these too (its unknown-key check looks inside unions); a config that did not
    // come through the host has not been checked for them.
    const unknown = typeof setting === 'object' ? Object.keys(setting).filter((k) => !DetectorKeys.includes(k)) : []
    if (unknown.length)
      throw invalid(`detector "${name}" has no option ${unknown.map((k) => `"${k}"`).join(', ')}; allowed: ${DetectorKeys.join(', ')}`)
  }
  const compiled = new Map<string, SafeRegex>()
  for (const p of config.patterns) {
    if ((BuiltinNames as string[]).includes(p.name))
      throw invalid(`pattern "${p.name}" has the name of a built-in detector; choose another name`)
    if (compiled.has(p.name))
      throw invalid(`pattern name "${p.name}" is used twice; names identify guards in guard/tripped and must be unique`)
    const problem = patternProblem(p)
    if (problem) throw invalid(`pattern "${p.name}": ${problem}`)
    compiled.set(p.name, safeRegex(p.pattern, p.flags ?? ''))
  }
  const names = new Set<string>([...BuiltinNames, ...compiled.keys()])
  for (const [i, e] of config.exempt.entries()) {
    const unknown = e.detectors.filter((d) => d !== '*' && !names.has(d))
    if (unknown.length)
      throw invalid(
        `exempt[${i}] names ${unknown.map((d) => `"${d}"`).join(', ')}, which is neither a detector nor a pattern; known: ${[...names].join(', ')}`,
      )
  }
  return compiled
}

export default definePlugin<Config>(manifest, (ctx, config) => {
  const patterns = checkConfig(config)
  ctx.set('guardrail', new Guardrails(config, manifest.version, compileGuards(config, patterns)))
})
