// Runs the Worker locally as `wrangler dev` does (local D1, the directory and both shards with their migrations applied;
// Durable Objects, R2), through wrangler's API so that every outbound fetch() goes through scripts/outbound-guard.mjs:
// wrangler dev's own network reaches private addresses and has no setting to narrow it (docs/security.md, "Outbound
// requests").
import { join } from 'node:path'
import { unstable_startWorker } from 'wrangler'
import { migrateAll } from './d1-databases.mjs'
import { root } from './dev-env.mjs'
import { createOutboundGuard } from './outbound-guard.mjs'

/**
 * @param {object} opts
 * @param {number} opts.port
 * @param {string} [opts.ip] default 127.0.0.1
 * @param {string} [opts.persistTo] local D1/DO/R2 state; default wrangler's .wrangler/state
 * @param {string[]} [opts.envFiles] variable files instead of .dev.vars (tests)
 * @param {Record<string, string>} [opts.vars] variables that override wrangler.toml and the env files
 * @param {boolean} opts.allowLoopback ALLOW_LOOPBACK_URLS, for the outbound guard
 * @param {Omit<Parameters<typeof createOutboundGuard>[0], 'allowLoopback'>} [opts.guard] tests: resolver, TLS trust
 * @param {'none' | 'error' | 'warn' | 'info' | 'log' | 'debug'} [opts.logLevel]
 */
export async function startDevWorker(opts) {
  const persistArgs = opts.persistTo ? ['--persist-to', opts.persistTo] : []
  // The directory and every shard (scripts/d1-databases.mjs), with this Node (npm's, >= 22.12 as wrangler needs).
  const failed = migrateAll('--local', persistArgs)
  if (failed) throw new Error(`D1 migrations failed on ${failed.binding}:\n${failed.output}`)

  const bindings = Object.fromEntries(Object.entries(opts.vars ?? {}).map(([name, value]) => [name, { type: 'plain_text', value }]))
  const worker = await unstable_startWorker({
    config: join(root, 'wrangler.toml'),
    ...(opts.envFiles ? { envFiles: opts.envFiles } : {}),
    bindings,
    dev: {
      server: { hostname: opts.ip ?? '127.0.0.1', port: opts.port },
      inspector: false,
      watch: false,
      persist: opts.persistTo ?? undefined,
      logLevel: opts.logLevel ?? 'warn',
      outboundService: createOutboundGuard({ ...opts.guard, allowLoopback: opts.allowLoopback }),
    },
  })
  await worker.ready
  return worker
}
