/**
 * The plan table is code. Caps apply per connected account (each account's Durable Object enforces its own);
 * `GET /usage` reports the tenant's sums. Every plan carries the early-access label of spec part 9.
 */
export type Plan = {
  name: string
  label: string
  accountsCap: number
  sendsPerDay: number
  newContactsPerDay: number
}

export const PLANS = {
  free: { name: 'free', label: 'free (early access)', accountsCap: 1, sendsPerDay: 50, newContactsPerDay: 10 },
} as const satisfies Record<string, Plan>

export type PlanName = keyof typeof PLANS
export const PLAN_NAMES = Object.keys(PLANS) as [PlanName, ...PlanName[]]
export const DEFAULT_PLAN: PlanName = 'free'

export function planOf(name: string): Plan {
  return (PLANS as Record<string, Plan>)[name] ?? PLANS[DEFAULT_PLAN]
}
