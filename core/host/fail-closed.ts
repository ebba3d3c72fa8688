/**
 * @module host/fail-closed
 * What an agent gets when a swap of its policy, guardrail or verifier failed and even the version that
 * served before could not be plugged back: a stand-in that refuses everything, never "no policy". A
 * missing guardrail would let all content through (it is optional), and a hot reload must never turn a
 * safety plugin into nothing. The stand-in serves until a version of the plugin starts again.
 */
import type { Context } from 'cordis'
import { definePlugin, type CordagePlugin, type Manifest } from '../contracts/manifest.ts'
import type { PolicyService } from '../contracts/services/policy.ts'
import type { GuardrailService } from '../contracts/services/guardrail.ts'
import type { VerifierService } from '../contracts/services/verifier.ts'

/** Services that must never be left unprovided by a failed swap. */
export const FailClosedServices = ['policy', 'guardrail', 'verifier'] as const

/** The fail-closed services among those a manifest provides. */
export function guardedServices(manifest: Manifest): string[] {
  return Object.keys(manifest.provides ?? {}).filter((s) => (FailClosedServices as readonly string[]).includes(s))
}

/**
 * A plugin that provides each of `services` as a refusal: policy denies every action, the guardrail
 * blocks all content, the verifier fails every answer (not repairable). `why` is shown in each refusal.
 */
export function failClosedPlugin(failed: Manifest, services: string[], why: string): CordagePlugin {
  const provides = Object.fromEntries(services.map((s) => [s, failed.provides![s]]))
  const manifest: Manifest = {
    name: `${failed.name}-fail-closed`,
    version: failed.version,
    description: `stands in for ${failed.name}@${failed.version}, which failed to reload`,
    provides,
  }
  const reason = `${failed.name} could not be reloaded or restored (${why}); refusing until it starts again`
  const plugin = definePlugin(manifest, (ctx: Context) => {
    for (const service of services) {
      if (service === 'policy') {
        const policy: PolicyService = {
          version: `${manifest.name}@${manifest.version}`,
          decide: () => ({ verdict: 'deny', ruleId: 'fail-closed', reason }),
        }
        ctx.set('policy', policy)
      } else if (service === 'guardrail') {
        const guardrail: GuardrailService = {
          version: `${manifest.name}@${manifest.version}`,
          check: () => ({ action: 'block', guard: 'fail-closed', reason }),
        }
        ctx.set('guardrail', guardrail)
      } else if (service === 'verifier') {
        const verifier: VerifierService = { verify: () => ({ ok: false, code: 'verification_failed', reason, repairable: false }) }
        ctx.set('verifier', verifier)
      }
    }
  })
  standIns.add(plugin)
  return plugin
}

const standIns = new WeakSet<object>()

/** True for a stand-in made by {@link failClosedPlugin}. */
export function isFailClosed(plugin: object): boolean {
  return standIns.has(plugin)
}
