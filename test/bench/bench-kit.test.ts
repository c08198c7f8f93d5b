// medianBy picks a run, not a number: the figure of the median run and its companions (that run's CPU) stay together.
import { describe, expect, it } from 'vitest'
import { medianBy } from './bench-kit'

describe('medianBy', () => {
  it('picks the middle run by its key, with the run’s other figures', () => {
    const runs = [
      { rate: 559, cpu: 1.7 },
      { rate: 485, cpu: 2.1 },
      { rate: 493, cpu: 2.4 },
    ]
    expect(medianBy(runs, (r) => r.rate)).toEqual({ rate: 493, cpu: 2.4 })
    expect(runs[0]).toEqual({ rate: 559, cpu: 1.7 })
  })

  it('takes the upper middle of an even number, and refuses none', () => {
    expect(medianBy([4, 1, 3, 2], (x) => x)).toBe(3)
    expect(() => medianBy([], (x: number) => x)).toThrow('no runs')
  })
})
