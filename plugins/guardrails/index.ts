import { CordageError, definePlugin } from 'cordage'
import { BuiltinNames } from './detectors.ts'
import { compileGuards, Guardrails } from './guard.ts'
import manifest, { type Config } from './manifest.ts'

export { Guardrails, compileGuards, stringsOf } from './guard.ts'
export { Builtins, cardBrand, isCardNumber, isIban, luhn } from './detectors.ts'

const DetectorKeys = ['enabled', 'stages', 'action', 'replacement']

/**
 * The checks the schema cannot make, each naming the guard it is about: a pattern that does not
 * compile or matches the empty string, a name used twice, an exemption naming no detector.
 * Returns the compiled patterns by name.
 */
export function checkConfig(config: Config): Map<string, RegExp> {
  const invalid = (message: string) => new CordageError('plugin_config_invalid', `guardrails: ${message}`)
  for (const name of BuiltinNames) {
    const setting = config.detectors[name]
    // The host's unknown-key check does not look inside a union (true | { ... }).
    const unknown = typeof setting === 'object' ? Object.keys(setting).filter((k) => !DetectorKeys.includes(k)) : []
    if (unknown.length) throw invalid(`detector "${name}" has no option ${unknown.map((k) => `"${k}"`).join(', ')}; allowed: ${DetectorKeys.join(', ')}`)
  }
  const compiled = new Map<string, RegExp>()
  for (const p of config.patterns) {
    if ((BuiltinNames as string[]).includes(p.name)) throw invalid(`pattern "${p.name}" has the name of a built-in detector; choose another name`)
    if (compiled.has(p.name)) throw invalid(`pattern name "${p.name}" is used twice; names identify guards in guard/tripped and must be unique`)
    let regex: RegExp
    try {
      regex = new RegExp(p.pattern, `g${p.flags ?? ''}`)
    } catch (error) {
      throw invalid(`pattern "${p.name}" is not a valid regular expression: ${(error as Error).message}`)
    }
    if (new RegExp(regex.source, regex.flags.replace('g', '')).test('')) throw invalid(`pattern "${p.name}" matches the empty string, so it would match everywhere`)
    compiled.set(p.name, regex)
  }
  const names = new Set<string>([...BuiltinNames, ...compiled.keys()])
  for (const [i, e] of config.exempt.entries()) {
    const unknown = e.detectors.filter((d) => d !== '*' && !names.has(d))
    if (unknown.length) throw invalid(`exempt[${i}] names ${unknown.map((d) => `"${d}"`).join(', ')}, which is neither a detector nor a pattern; known: ${[...names].join(', ')}`)
  }
  return compiled
}

export default definePlugin<Config>(manifest, (ctx, config) => {
  const patterns = checkConfig(config)
  ctx.set('guardrail', new Guardrails(config, manifest.version, compileGuards(config, patterns)))
})
