/** The custom channel's stored settings and how its URL is shown back (the secret part masked). */
import { z } from 'zod'

export const CUSTOM_ACCOUNT_ID = 'custom' as const
export const CUSTOM_KIND = 'custom'

/** `actions`: the bridge opted in to reactions, typing and read marks (issue 25); absent in configs stored before. */
export const CustomConfig = z.object({ webhook_url: z.string(), actions: z.boolean().optional() })
export type CustomConfig = z.infer<typeof CustomConfig>

/** `https://bridge.example.com/***`: the origin stays visible, the path and query (where secrets live) do not. */
export function maskUrl(raw: string): string {
  const u = new URL(raw)
  return u.pathname === '/' && !u.search ? u.origin : `${u.origin}/***`
}
