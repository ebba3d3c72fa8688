/**
 * Temp dirs for tests: each is removed when the test process exits, however the test ended (a failed
 * assertion, a timeout), so the suite leaves the temp dir as it found it. test/run.ts gives each test
 * file a temp dir of its own and fails a file that leaves anything there.
 *
 * Pass the test's context to remove the folder as soon as that test ends (and not only at exit).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made = new Set<string>()

export function tempDir(prefix = 'cordage-test-', t?: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.add(dir)
  t?.after(() => removeTemp(dir))
  return dir
}

/** Remove a folder tempDir made now (a test that checks what is left, or frees a large folder early). */
export function removeTemp(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  made.delete(dir)
}

process.on('exit', () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
    } catch {
      // A folder still in use by a process the test could not stop; the runner reports what is left.
    }
  }
})
