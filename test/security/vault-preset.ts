/**
 * The preset of the integrity and scan tests: agent `desk` exports the vault (a large result, kept as
 * an artifact) and reads a customer record whose card number the guardrail redacts (its raw form kept
 * as an audit-only artifact), on the lab's store.
 */
import type { IntegrityLab } from './integrity-lab.ts'
import { vaultDesk } from './integrity-lab.ts'

export interface VaultOptions {
  /** The lines of the vault export (they reach the artifact only). */
  lines?: string[]
  /** The preset's top-level `secrets`. */
  secrets?: string[]
}

export function vaultPreset(lab: IntegrityLab, options: VaultOptions = {}) {
  return {
    cordage: 1,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    agents: {
      desk: {
        task: 'Export the vault and look up customer C-9.',
        budgets: { maxSteps: 6 },
        artifactAboveBytes: 1024,
        audit: { keepRedacted: true },
        model: {
          plugin: 'model-scripted',
          config: { script: [{ tool: 'export_vault' }, { tool: 'customer_record' }, { final: 'Exported; customer C-9 looked up.' }] },
        },
        plugins: [
          lab.storeEntry(),
          'tools-registry',
          'context-basic',
          { plugin: 'verifier-basic', config: { minCount: 0 } },
          { plugin: 'policy-rules', config: { default: 'deny', rules: [{ id: 'all', verdict: 'allow', match: { tool: '*' } }] } },
          'guardrails',
          'artifacts',
          { path: vaultDesk, config: { lines: options.lines ?? ['line one of the vault', 'line two of the vault'] } },
        ],
      },
    },
  }
}
