/**
 * The simulated network on its own (`tsx relay/sim/network/main.ts`), so relays can restart while the "upstream"
 * keeps its phones and backlog. SIM_PORT (default 0: a free port), SIM_HOST, alpha's QR timing (SIM_QR_FIRST_MS,
 * SIM_QR_NEXT_MS, SIM_QR_REFS) and beta's (SIM_BETA_CODE_MS: life of a login code, SIM_BETA_QR_MS: of a QR login
 * token) come from the environment. Prints the control API's base URL.
 */
import { z } from 'zod'
import { startSimNetwork } from './server'

const env = z
  .object({
    SIM_HOST: z.string().default('127.0.0.1'),
    SIM_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    SIM_QR_FIRST_MS: z.coerce.number().int().positive().optional(),
    SIM_QR_NEXT_MS: z.coerce.number().int().positive().optional(),
    SIM_QR_REFS: z.coerce.number().int().positive().optional(),
    SIM_BETA_CODE_MS: z.coerce.number().int().positive().optional(),
    SIM_BETA_QR_MS: z.coerce.number().int().min(1000).optional(),
  })
  .parse(process.env)

const sim = await startSimNetwork({
  host: env.SIM_HOST,
  port: env.SIM_PORT,
  timing: {
    ...(env.SIM_QR_FIRST_MS ? { firstQrMs: env.SIM_QR_FIRST_MS } : {}),
    ...(env.SIM_QR_NEXT_MS ? { nextQrMs: env.SIM_QR_NEXT_MS } : {}),
    ...(env.SIM_QR_REFS ? { qrRefs: env.SIM_QR_REFS } : {}),
  },
  betaTiming: {
    ...(env.SIM_BETA_CODE_MS ? { codeMs: env.SIM_BETA_CODE_MS } : {}),
    ...(env.SIM_BETA_QR_MS ? { qrMs: env.SIM_BETA_QR_MS } : {}),
  },
})
console.log(`Sim control API: ${sim.url}/sim`)
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void sim.close().then(() => process.exit(0)))
