/**
 * The trust boundary, file by file, for `npm run test:mutation` (test/mutation/run.ts): what Stryker
 * mutates, and the tests that must notice. Each list is kept short so one mutant costs a few seconds:
 * the unit tests of the file (test/unit/), and for a few files one fast existing test that reaches
 * the file through the route a plugin would take. The wider suite exercises these files too; it is
 * left out here for time, so a score is what the listed tests pin down.
 */
import { readFileSync } from 'node:fs'

export interface Target {
  /** The name on the command line and in the table: a path, or `path#what` for part of a file. */
  name: string
  /** Stryker `mutate` entries, ranges included (`file:startLine-endLine`). */
  mutate: () => string[]
  /** Test files run for each mutant. Files that do not exist (yet) are left out. */
  tests: string[]
}

/** `file:start-end` covering the lines from the first line matching `from` to the first line after it matching `to`. */
function range(file: string, from: RegExp, to: RegExp): string {
  const lines = readFileSync(file, 'utf8').split('\n')
  const start = lines.findIndex((l) => from.test(l))
  if (start < 0) throw new Error(`${file}: no line matches ${from}`)
  const end = lines.findIndex((l, i) => i > start && to.test(l))
  if (end < 0) throw new Error(`${file}: no line after ${start + 1} matches ${to}`)
  return `${file}:${start + 1}-${end + 1}`
}

const whole = (file: string) => () => [file]

export const Targets: Target[] = [
  {
    name: 'core/kernel/ticket.ts',
    mutate: whole('core/kernel/ticket.ts'),
    tests: ['test/unit/ticket.test.ts', 'test/security/adversarial-plugins.test.ts'],
  },
  { name: 'core/kit/hash.ts', mutate: whole('core/kit/hash.ts'), tests: ['test/unit/hash.test.ts', 'test/unit/hash.property.test.ts'] },
  { name: 'core/kit/freeze.ts', mutate: whole('core/kit/freeze.ts'), tests: ['test/unit/freeze.test.ts', 'test/unit/hash.test.ts'] },
  { name: 'core/kit/match.ts', mutate: whole('core/kit/match.ts'), tests: ['test/unit/match.test.ts', 'test/unit/match.property.test.ts'] },
  { name: 'core/kit/glob.ts', mutate: whole('core/kit/glob.ts'), tests: ['test/unit/glob.test.ts', 'test/unit/match.property.test.ts'] },
  { name: 'core/kit/regex.ts', mutate: whole('core/kit/regex.ts'), tests: ['test/unit/regex.test.ts'] },
  {
    // defineTool, and the check of a definition it runs first.
    name: 'core/kernel/tool.ts',
    mutate: () => ['core/kernel/tool.ts', 'core/contracts/checks/tool.ts'],
    tests: ['test/unit/tool.test.ts', 'test/unit/tool-call.test.ts'],
  },
  { name: 'core/kit/grants.ts', mutate: whole('core/kit/grants.ts'), tests: ['test/unit/grants.test.ts'] },
  { name: 'core/kernel/status.ts', mutate: whole('core/kernel/status.ts'), tests: ['test/unit/status.test.ts', 'test/state.test.ts'] },
  { name: 'core/kernel/budget.ts', mutate: whole('core/kernel/budget.ts'), tests: ['test/unit/budget.test.ts'] },
  {
    // The checks of what deciding services answer, one file per contract, and what they share.
    name: 'core/contracts/checks',
    mutate: () => [
      'core/contracts/check.ts',
      ...['policy', 'guardrail', 'verifier', 'progress', 'context', 'model', 'meter'].map((c) => `core/contracts/checks/${c}.ts`),
    ],
    tests: ['test/unit/verdicts.test.ts', 'test/unit/meter-checks.test.ts'],
  },
  { name: 'core/kit/secrets.ts', mutate: whole('core/kit/secrets.ts'), tests: ['test/unit/secrets.test.ts'] },
  // How the loop's stages wait (a throw or a rejection lost here would skip a check), and one call in flight.
  { name: 'core/kit/later.ts', mutate: whole('core/kit/later.ts'), tests: ['test/unit/later.test.ts'] },
  { name: 'core/kernel/tool-call.ts', mutate: whole('core/kernel/tool-call.ts'), tests: ['test/unit/tool-call.test.ts'] },
  {
    name: 'core/kernel/store-writer.ts',
    mutate: whole('core/kernel/store-writer.ts'),
    tests: ['test/unit/store-writer.test.ts', 'test/security/adversarial-plugins.test.ts'],
  },
  {
    name: 'core/kit/store-kit.ts',
    mutate: whole('core/kit/store-kit.ts'),
    tests: ['test/unit/store-kit.test.ts', 'test/store-kit.test.ts'],
  },
  {
    // The ledger rules: an intent or outcome checked against the ledger and against the batch it comes in.
    name: 'plugins/store-memory/memory-store.ts#ledger',
    mutate: () => [
      range('plugins/store-memory/memory-store.ts', /const inBatch = new Map/, /^ {4}\}\)$/),
      range('plugins/store-memory/memory-store.ts', /^ {2}private prepare\(/, /^ {2}\}$/),
    ],
    tests: ['test/unit/ledger.test.ts', 'plugins/store-memory/test/index.test.ts'],
  },
]
