/**
 * core/kit/later.ts: the loop's stages are generators that yield what they would await. `flow` runs
 * them at once while every value yielded is there, and as a promise from the first that is not; a
 * rejection lands where the stage waited, as an `await` would put it.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { flow, isThenable, wait, type Flow } from '../../core/kit/later.ts'

function* add(a: number | Promise<number>, b: number | Promise<number>): Flow<number> {
  return (yield* wait(a)) + (yield* wait(b))
}

describe('flow', () => {
  it('answers at once, not with a promise, when nothing yielded had to be waited for', () => {
    assert.equal(flow(add(1, 2)), 3)
    function* nothing(): Flow<string> {
      yield undefined
      yield 7
      return 'done'
    }
    assert.equal(flow(nothing()), 'done')
  })

  it('answers with a promise from the first value that is one, and goes on with what it resolved to', async () => {
    const late = flow(add(1, Promise.resolve(2)))
    assert.ok(late instanceof Promise)
    assert.equal(await late, 3)
    assert.equal(await flow(add(Promise.resolve(4), Promise.resolve(5))), 9)
  })

  it('runs nested stages by yield* in one flow, in order', async () => {
    const seen: string[] = []
    function* inner(tag: string, value: number | Promise<number>): Flow<number> {
      seen.push(`${tag} start`)
      const v = yield* wait(value)
      seen.push(`${tag} got ${v}`)
      return v
    }
    function* outer(): Flow<number> {
      const a = yield* inner('a', 1)
      const b = yield* inner('b', Promise.resolve(2))
      const c = yield* inner('c', 3)
      return a + b + c
    }
    assert.equal(await flow(outer()), 6)
    assert.deepEqual(seen, ['a start', 'a got 1', 'b start', 'b got 2', 'c start', 'c got 3'])
  })

  it('throws a rejection into the stage where it waited, which may catch it', async () => {
    function* guarded(): Flow<string> {
      try {
        yield* wait(Promise.reject(new Error('late failure')))
        return 'not reached'
      } catch (error) {
        return `caught ${(error as Error).message}`
      }
    }
    assert.equal(await flow(guarded()), 'caught late failure')
  })

  it('rejects with what a stage throws after a wait, and throws what it throws before any wait', async () => {
    function* after(): Flow<number> {
      yield* wait(Promise.resolve(1))
      throw new Error('after the wait')
    }
    await assert.rejects(flow(after()) as Promise<number>, /after the wait/)
    function* before(): Flow<number> {
      yield 1
      throw new Error('before any wait')
    }
    assert.throws(() => flow(before()), /before any wait/)
  })

  it('rejects with an uncaught rejection, and does not resume the stage after it', async () => {
    let resumed = false
    function* uncaught(): Flow<number> {
      yield* wait(Promise.reject(new Error('nobody catches')))
      resumed = true
      return 1
    }
    await assert.rejects(flow(uncaught()) as Promise<number>, /nobody catches/)
    assert.equal(resumed, false)
  })

  it('waits for a thenable that is not a native promise', async () => {
    const thenable = { then: (ok: (v: number) => void) => setImmediate(() => ok(41)) }
    assert.equal(await flow(add(thenable as unknown as Promise<number>, 1)), 42)
  })
})

describe('isThenable', () => {
  it('is true for promises and thenables only', () => {
    assert.equal(isThenable(Promise.resolve(1)), true)
    assert.equal(isThenable({ then() {} } as unknown as Promise<number>), true)
    for (const value of [undefined, null, 0, 'then', {}, { then: 1 }, [] as unknown]) assert.equal(isThenable(value), false)
  })
})
