// `npm run bench` arguments: the directory after --compare is not a bench name, and the environment is the fallback.
import { describe, expect, it } from 'vitest'
import { benchArgs } from './bench-args'

describe('benchArgs', () => {
  it('takes the directory after --compare and keeps the bench names', () => {
    expect(benchArgs(['inbound', '--compare', '/work/wt/base58'], {})).toEqual({ only: ['inbound'], profile: false, compareDir: '/work/wt/base58' })
  })

  it('takes --compare=<dir>, and BENCH_COMPARE when no flag is given', () => {
    expect(benchArgs(['--compare=/a', '--profile'], { BENCH_COMPARE: '/b' })).toEqual({ only: [], profile: true, compareDir: '/a' })
    expect(benchArgs(['relay'], { BENCH_COMPARE: '/b' })).toEqual({ only: ['relay'], profile: false, compareDir: '/b' })
    expect(benchArgs([], { BENCH_COMPARE: '' }).compareDir).toBeUndefined()
  })

  it('refuses --compare without a directory', () => {
    expect(() => benchArgs(['--compare'], {})).toThrow('--compare needs a directory')
    expect(() => benchArgs(['--compare', '--profile'], {})).toThrow('--compare needs a directory')
  })
})
