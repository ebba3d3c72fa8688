import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { diffLines, lines, MaxCells, unifiedDiff } from '../line-diff.ts'
import { tempDir } from '../../../test/temp.ts'

/** Apply a unified diff to the old text: what `patch` would make of it (hunks in order, context checked). */
function applyDiff(before: string, diff: string): string {
  const a = lines(before)
  const out: string[] = []
  let at = 0
  const body = diff.split('\n').slice(2, -1)
  for (const line of body) {
    const hunk = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line)
    if (hunk) {
      const start = Number(hunk[2]) === 0 ? Number(hunk[1]) : Number(hunk[1]) - 1
      while (at < start) out.push(a[at++])
      continue
    }
    const [kind, text] = [line[0], line.slice(1)]
    if (kind === ' ' || kind === '-') assert.equal(a[at++], text, 'context and removed lines are the old text')
    if (kind === ' ' || kind === '+') out.push(text)
  }
  while (at < a.length) out.push(a[at++])
  return out.length ? `${out.join('\n')}\n` : ''
}

/** A small random text over few distinct lines, so diffs have common parts. */
function randomText(seed: number, n: number): string {
  let x = seed
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x)
  return Array.from({ length: n }, () => `line ${next() % 6}`).join('\n') + (n ? '\n' : '')
}

describe('coding-tools: line diff', () => {
  it('writes a unified diff with hunk headers and three lines of context', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n'
    const after = 'a\nb\nc\nd\nE\nf\ng\nh\n'
    assert.equal(unifiedDiff('x.txt', before, after), '--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n')
    assert.equal(unifiedDiff('x.txt', before, before), '')
    assert.equal(unifiedDiff('new.txt', undefined, 'one\ntwo\n'), '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n')
  })

  it('keeps far apart changes in separate hunks and close ones in one', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n') + '\n'
    const far = before.replace('l1\n', 'L1\n').replace('l18\n', 'L18\n')
    assert.equal((unifiedDiff('f', before, far).match(/^@@/gm) ?? []).length, 2)
    const close = before.replace('l1\n', 'L1\n').replace('l7\n', 'L7\n')
    assert.equal((unifiedDiff('f', before, close).match(/^@@/gm) ?? []).length, 1)
  })

  it('finds a smallest diff (LCS) and the diff applied to the old text gives the new, for many random pairs', () => {
    for (let seed = 1; seed < 300; seed++) {
      const before = randomText(seed, seed % 17)
      const after = randomText(seed * 7 + 3, (seed * 3) % 13)
      const diff = unifiedDiff('r', before, after)
      if (before === after) assert.equal(diff, '')
      else assert.equal(applyDiff(before, diff), after, `seed ${seed}`)
    }
    const ops = diffLines(['a', 'b', 'c', 'd'], ['a', 'c', 'd', 'e'])
    assert.equal(ops.filter((o) => o.kind !== ' ').length, 2, 'one removed, one added')
  })

  it('agrees with diff(1) on what changes (when diff is installed)', (t) => {
    const dir = tempDir('line-diff-')
    try {
      const before = randomText(42, 40)
      const after = randomText(43, 40)
      writeFileSync(join(dir, 'a'), before)
      writeFileSync(join(dir, 'b'), after)
      const gnu = spawnSync('diff', ['-u', join(dir, 'a'), join(dir, 'b')], { encoding: 'utf8' })
      if (gnu.error) return t.skip('diff is not installed')
      const count = (text: string, sign: string) =>
        text.split('\n').filter((l) => l.startsWith(sign) && !l.startsWith(sign.repeat(3))).length
      const ours = unifiedDiff('a', before, after)
      // Both are smallest edits: the same number of lines removed and added.
      assert.deepEqual([count(ours, '-'), count(ours, '+')], [count(gnu.stdout, '-'), count(gnu.stdout, '+')])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('falls back to a correct (not smallest) diff when the middle is too large to compare line by line', () => {
    const n = Math.ceil(Math.sqrt(MaxCells)) + 10
    const before = Array.from({ length: n }, (_, i) => `a${i}`).join('\n') + '\n'
    const after = Array.from({ length: n }, (_, i) => (i % 2 ? `a${i}` : `b${i}`)).join('\n') + '\n'
    assert.equal(applyDiff(before, unifiedDiff('big', before, after)), after)
  })
})
