/**
 * Regular expressions from presets (policy rules, approvals, guardrail and verifier patterns, citation
 * patterns) and from the model (a code search) run on text the model controls. On a backtracking engine
 * one catastrophic pattern stalls the whole process, synchronously, where no deadline can interrupt
 * it; so they run on the linear-time engine (core/kit/regex.ts), and a pattern that needs backtracking is
 * refused when the preset is checked. Each plugin's tests cover its own patterns; this file covers a
 * whole run and `cordage check`.
 *
 * A regression here shows as a hang, not a failure: node's per-test timeout cannot interrupt
 * synchronous code. Run with `--test-timeout` to turn it into one.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { refundAnswer, supportDesk, tempDir } from '../helpers.ts'
import { cordageBin as bin } from '../bin.ts'

describe('security: patterns from presets and from the model run in linear time', () => {
  it('a policy rule with a catastrophic regex, and a crafted argument: the run ends, and the rule still decides', {
    timeout: 20_000,
  }, async () => {
    // On V8's engine ^(a+)+$ against 34 a's and a b took longer than a minute, past any deadline.
    const crafted = 'a'.repeat(40) + 'b'
    const desk = await supportDesk({
      script: [
        { tool: 'lookup_policy', args: { topic: crafted } },
        { tool: 'lookup_policy', args: { topic: 'aaaa' } },
        { final: refundAnswer },
      ],
      rules: [{ id: 'only-a', verdict: 'allow', match: { tool: 'lookup_policy', args: { topic: { regex: '^(a+)+$' } } } }],
      budgets: { deadlineMs: 5000 },
      verifier: { minCount: 0 },
    })
    try {
      const state = await desk.agent.run()
      assert.ok(['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED'].includes(state.status), state.status)
      const decisions = (await desk.events(state.runId)).filter((e) => e.type === 'tool/decision') as RunEvent<'tool/decision'>[]
      assert.deepEqual(
        decisions.map((d) => [d.actionId, d.data.verdict]),
        [
          ['s1.a1', 'deny'],
          ['s2.a1', 'allow'],
        ],
      )
      assert.equal(decisions[1].data.ruleId, 'only-a')
    } finally {
      await desk.stop()
    }
  })

  it('cordage check refuses a pattern that needs backtracking, and an unknown key, at their lines, with exit 2', () => {
    const dir = tempDir()
    const file = join(dir, 'preset.yml')
    /** What `cordage check` prints for an agent with these plugins after store, tools, context and policy. */
    const check = (...plugins: unknown[]) => {
      const base = ['store-memory', 'tools-registry', 'context-basic', { plugin: 'policy-rules', config: { default: 'deny' } }]
      const preset = {
        cordage: 1,
        agents: {
          a: { task: 't', model: { plugin: 'model-scripted', config: { script: [{ final: 'hi' }] } }, plugins: [...base, ...plugins] },
        },
      }
      writeFileSync(file, stringify(preset))
      const result = spawnSync(process.execPath, [bin, 'check', '--preset', file], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      })
      assert.equal(result.status, 2, result.stdout + result.stderr)
      return result.stderr
    }
    const NoBacktracking =
      /\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process\)/
    const basic = { plugin: 'verifier-basic', config: { minCount: 0 } }

    let err = check(basic, {
      plugin: 'guardrails',
      config: {
        patterns: [
          { name: 'order-id', pattern: 'ORD-\\d{6}' },
          { name: 'key', pattern: '(?<=key=)\\w+' },
        ],
      },
    })
    assert.match(
      err,
      /preset\.yml:\d+:\d+ agents\.a\.plugins\[5\]\.config\.patterns\[1\]\.pattern: plugin guardrails@1\.0\.0: pattern "key": \/\(\?<=key=\)\\w\+\/ is not a valid regular expression: /,
    )
    assert.match(err, NoBacktracking)

    err = check(basic, { plugin: 'guardrails', config: { exempt: [{ tool: 'vault_*', detector: ['secrets'] }] } })
    assert.match(
      err,
      /preset\.yml:\d+:\d+ agents\.a\.plugins\[5\]\.config\.exempt\[0\]\.detector: plugin guardrails@1\.0\.0 has no config key "detector"; allowed: tool, detectors, stages/,
    )

    err = check({ plugin: 'verifier-suite', config: { all: [{ evidence: {} }, { output: { format: 'text', pattern: '(?=x)done' } }] } })
    assert.match(
      err,
      /preset\.yml:\d+:\d+ agents\.a\.plugins\[4\]\.config\.all\[1\]\.output\.pattern: plugin verifier-suite@1\.0\.0: \/\(\?=x\)done\/ is not a valid regular expression: /,
    )
    assert.match(err, NoBacktracking)

    err = check({ plugin: 'verifier-suite', config: { any: [{ evidence: { pattern: 'x', minCont: 1 } }] } })
    assert.match(
      err,
      /preset\.yml:\d+:\d+ agents\.a\.plugins\[4\]\.config\.any\[0\]\.evidence\.minCont: plugin verifier-suite@1\.0\.0: unknown key "minCont"; an evidence check has pattern, flags, minCount, /,
    )

    err = check({ plugin: 'verifier-basic', config: { pattern: '\\[(source): ([^\\]]+)\\] \\1' } })
    assert.match(
      err,
      /preset\.yml:\d+:\d+ agents\.a\.plugins\[4\]\.config\.pattern: plugin verifier-basic@1\.0\.0: .* is not a valid regular expression: /,
    )
    assert.match(err, NoBacktracking)
  })
})
