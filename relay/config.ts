/**
 * The relay's configuration: environment variables parsed with zod, so a typo fails at start with a clear message
 * instead of later. `--sim` on the command line is the same as RELAY_DRIVER=sim.
 */
import { z } from 'zod'

const Port = z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)])

export const RelayEnv = z.object({
  GATEWAY_URL: z.url({
    protocol: /^(https?|wss?)$/,
    error: 'GATEWAY_URL must be the http(s) or ws(s) origin of the gateway, e.g. https://gateway.example.com',
  }),
  // A token is rly_ + 40 base62 characters; the relay's id (rly_ + 20) looks alike and is the usual wrong paste, so
  // exactly 20 is refused by name (other lengths are left to the gateway: it refuses an unknown token and the relay exits 78).
  RELAY_TOKEN: z
    .string()
    .refine((v) => !/^rly_[0-9A-Za-z]{20}$/.test(v), 'RELAY_TOKEN is a relay id (rly_ + 20 characters): use the "token" field of POST /admin/relays, not "id"')
    .refine((v) => /^rly_[0-9A-Za-z]{21,}$/.test(v), 'RELAY_TOKEN must be the "token" from POST /admin/relays (rly_ + 40 characters)'),
  RELAY_SESSION_KEY: z.string().min(32, 'RELAY_SESSION_KEY must be at least 32 characters; create one with: openssl rand -base64 32'),
  RELAY_DRIVER: z.string().min(1).default('alpha'),
  RELAY_HEALTH_HOST: z.string().default('127.0.0.1'),
  /** `0` picks a free port (logged at start), `off` disables the health endpoint. */
  RELAY_HEALTH_PORT: Port.default(8790),
  /** The simulated network for RELAY_DRIVER=sim; without it the relay starts one in-process and prints its URL. */
  RELAY_SIM_URL: z.url().optional(),
  /** How long SIGTERM waits for unacked frames and session hand-over before closing anyway. */
  RELAY_DRAIN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Inbound media larger than this is not downloaded past it: the message is stored marked too large. Set it to the
   * gateway's MEDIA_MAX_BYTES when that is raised (both default to 64 MiB).
   */
  RELAY_MEDIA_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 * 1024 * 1024),
  /** beta's app credentials (the relay is the app logging users in): the operator's, or a tenant relay's own. */
  RELAY_BETA_API_ID: z.coerce.number().int().positive().optional(),
  RELAY_BETA_API_HASH: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'RELAY_BETA_API_HASH must be the 32-hex-digit api_hash of the app')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})

export type RelayConfig = {
  connectUrl: string
  token: string
  sessionKey: string
  driver: string
  healthHost: string
  healthPort: number | null
  simUrl: string | null
  drainTimeoutMs: number
  mediaMaxBytes: number
  logLevel: z.infer<typeof RelayEnv>['LOG_LEVEL']
  /** Needed by RELAY_DRIVER=beta only. */
  beta: { apiId: number; apiHash: string } | null
}

/** The WebSocket URL of the gateway's relay endpoint, from its public origin. */
export function connectUrlFor(gatewayUrl: string): string {
  const u = new URL(gatewayUrl)
  u.protocol = u.protocol === 'https:' || u.protocol === 'wss:' ? 'wss:' : 'ws:'
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/relay/connect`
  u.search = ''
  return u.toString()
}

export function loadConfig(env: NodeJS.ProcessEnv, argv: string[] = []): RelayConfig {
  const withFlags = argv.includes('--sim') ? { ...env, RELAY_DRIVER: 'sim' } : env
  const parsed = RelayEnv.safeParse(withFlags)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new Error(`relay configuration is invalid:\n${lines.join('\n')}`)
  }
  const e = parsed.data
  return {
    connectUrl: connectUrlFor(e.GATEWAY_URL),
    token: e.RELAY_TOKEN,
    sessionKey: e.RELAY_SESSION_KEY,
    driver: e.RELAY_DRIVER,
    healthHost: e.RELAY_HEALTH_HOST,
    healthPort: e.RELAY_HEALTH_PORT === 'off' ? null : e.RELAY_HEALTH_PORT,
    simUrl: e.RELAY_SIM_URL ?? null,
    drainTimeoutMs: e.RELAY_DRAIN_TIMEOUT_MS,
    mediaMaxBytes: e.RELAY_MEDIA_MAX_BYTES,
    logLevel: e.LOG_LEVEL,
    beta: e.RELAY_BETA_API_ID !== undefined && e.RELAY_BETA_API_HASH !== undefined ? { apiId: e.RELAY_BETA_API_ID, apiHash: e.RELAY_BETA_API_HASH } : null,
  }
}
