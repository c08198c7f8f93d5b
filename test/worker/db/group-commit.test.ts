/**
 * GroupCommit on its own (db/group-commit.ts): writes queued in one tick share a batch, a lone write goes out without
 * waiting for a timer, writes that arrive while a batch runs share the next one, and a failed shared batch fails
 * only the write that broke it.
 */
import { describe, expect, it } from 'vitest'
import { GroupCommit } from '../../../worker/db/group-commit'

/** A commit that records each batch and answers each statement with itself; `fail` refuses any batch holding it. */
function recorder(fail?: string) {
  const batches: string[][] = []
  const commit = async (statements: [string, ...string[]]) => {
    batches.push([...statements])
    if (fail !== undefined && statements.includes(fail)) throw new Error(`refused ${fail}`)
    return statements.map((s) => `did ${s}`)
  }
  return { batches, group: new GroupCommit<string>(commit) }
}

describe('GroupCommit', () => {
  it('sends writes queued in the same tick as one batch, each answered with its own results', async () => {
    const { batches, group } = recorder()
    const answers = await Promise.all([group.write(['a1', 'a2']), group.write(['b1']), group.write(['c1', 'c2'])])
    expect(batches).toEqual([['a1', 'a2', 'b1', 'c1', 'c2']])
    expect(answers).toEqual([['did a1', 'did a2'], ['did b1'], ['did c1', 'did c2']])
  })

  it('does not hold a lone write for a timer: it is committed before any macrotask runs', async () => {
    const { batches, group } = recorder()
    let timerRan = false
    setTimeout(() => {
      timerRan = true
    }, 0)
    await group.write(['only'])
    expect(batches).toEqual([['only']])
    expect(timerRan).toBe(false)
  })

  it('lets writes that arrive while a batch runs share the next one', async () => {
    const { batches, group } = recorder()
    const first = group.write(['a'])
    await Promise.resolve()
    await Promise.resolve() // the first batch is under way
    const later = [group.write(['b']), group.write(['c'])]
    await Promise.all([first, ...later])
    expect(batches).toEqual([['a'], ['b', 'c']])
  })

  it('retries a failed shared batch write by write, so only the bad one fails', async () => {
    const { batches, group } = recorder('bad')
    const settled = await Promise.allSettled([group.write(['a']), group.write(['bad']), group.write(['c'])])
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(batches).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']])
  })
})
