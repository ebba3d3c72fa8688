import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import ts from 'typescript'
import { budgetProblems, codeLines } from '../architecture/size.ts'
import { tempDir } from '../temp.ts'

const lines = (text: string) => codeLines(ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true))

describe('npm run size', () => {
  it('counts code, not comments, JSDoc or blank lines', () => {
    const text = [
      '/**',
      ' * What it does.',
      ' * @param a the first',
      ' */',
      'export function f(a: number) {',
      '',
      '  // why',
      '  return a',
      '}',
    ].join('\n')
    assert.equal(lines(text), 3)
  })

  it('names each way the kernel is over its budgets: in all, per file, per class, per function', () => {
    const root = tempDir('cordage-size-')
    mkdirSync(join(root, 'core/kernel'), { recursive: true })
    writeFileSync(join(root, 'core/index.ts'), 'export {}\n')
    const body = Array.from({ length: 8 }, (_, i) => `  const v${i} = ${i}`).join('\n')
    writeFileSync(join(root, 'core/kernel/big.ts'), `export class Big {\n  run() {\n${body}\n  }\n}\n`)
    writeFileSync(join(root, 'core/kernel/small.ts'), 'export const x = 1\n')
    const problems = budgetProblems(root, { lines: 10, fileLines: 10, classLines: 10, functionLines: 5 })
    assert.deepEqual(problems, [
      'core/kernel: 14 code lines, more than 10',
      'core/kernel/big.ts: 12 code lines, more than 10 for a kernel file',
      'core/kernel/big.ts: class Big has 12 code lines, more than 10',
      'core/kernel/big.ts: function Big.run has 10 code lines, more than 5',
    ])
    assert.deepEqual(budgetProblems(root, { lines: 100, fileLines: 100, classLines: 100, functionLines: 100 }), [])
  })
})
