/**
 * @module host/secrets
 * Which values an agent's runs keep out of their record (core/kit/secrets.ts): the environment variables a
 * preset lists under `secrets`, and those its plugins name in config keys their manifests mark as
 * secret (`secrets: ['apiKeyEnv']` in model-openai's manifest: the variable named by `apiKeyEnv`; a key
 * whose value is an object names a variable in each of its values, as otel-traces' `headersEnv`).
 */
import { MinSecretLength, type Secret } from '../kit/secrets.ts'
import type { PlannedPlugin } from './resolve.ts'

export interface SecretsFound {
  secrets: Secret[]
  /** Variables that are set but too short to scrub safely, for a warning. */
  tooShort: string[]
}

/** The secrets of one agent, read from `env` now. Unset or empty variables are skipped. */
export function secretsOf(
  presetSecrets: readonly string[],
  plugins: readonly PlannedPlugin[],
  env: NodeJS.ProcessEnv = process.env,
): SecretsFound {
  const names = new Set(presetSecrets)
  for (const planned of plugins) {
    const config = planned.config as Record<string, unknown> | undefined
    for (const key of planned.entry.manifest.secrets ?? []) {
      const value = config && Object.hasOwn(config, key) ? config[key] : undefined
      // A key names one variable (apiKeyEnv), or several by what they are for (otel-traces' headersEnv).
      const named = typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value) : []
      for (const name of named) if (typeof name === 'string' && name) names.add(name)
    }
  }
  const secrets: Secret[] = []
  const tooShort: string[] = []
  for (const name of [...names].sort()) {
    const value = Object.hasOwn(env, name) ? env[name] : undefined
    if (!value) continue
    if (value.trim().length < MinSecretLength) tooShort.push(name)
    else secrets.push({ name, value: value.trim() })
  }
  return { secrets, tooShort }
}
