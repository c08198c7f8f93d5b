/**
 * A Workers Rate Limiting binding on an injected clock, for tests that count a limit to its end: the same rule as
 * the binding `wrangler dev` runs (miniflare's RateLimiterObject: a window of `periodS` aligned to the clock, a
 * count per key, "over" once `limit` uses are counted in the window), so a test does not fail when the wall clock's
 * minute rolls over between its steps.
 */
export function fixedWindowLimiter(rule: { limit: number; periodS: number }, now: () => number): RateLimit {
  const buckets = new Map<string, { window: number; count: number }>()
  return {
    async limit({ key }) {
      const window = Math.floor(now() / (rule.periodS * 1000))
      const bucket = buckets.get(key)
      const count = bucket?.window === window ? bucket.count : 0
      if (count >= rule.limit) return { success: false }
      buckets.set(key, { window, count: count + 1 })
      return { success: true }
    },
  }
}
