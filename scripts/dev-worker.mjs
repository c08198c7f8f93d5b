// Runs the Worker locally as `wrangler dev` does (local D1 with its migrations applied, Durable Objects, R2), through
// wrangler's API so that every outbound fetch() goes through scripts/outbound-guard.mjs: wrangler dev's own network
// reaches private addresses and has no setting to narrow it (docs/security.md, "Outbound requests").
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { unstable_startWorker } from 'wrangler'
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
  // This Node (npm's, >= 22.12 as wrangler needs), not whichever `node` PATH finds first.
  const migrate = spawnSync(
    process.execPath,
    [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'd1', 'migrations', 'apply', 'DB', '--local', ...persistArgs],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
    }
  )
  if (migrate.status !== 0) throw new Error(`D1 migrations failed:\n${migrate.stdout}${migrate.stderr}`)

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
