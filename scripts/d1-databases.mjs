// The D1 databases wrangler.toml binds (docs/ARCHITECTURE.md, "The data tier"): the directory `DB` and the shards
// `DB_SHARD_<n>`, one entry per database (DB_SHARD_0 is bound to the directory's own database, so it is one of them),
// and applying the migrations to all of them: every database gets the same set.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { unstable_readConfig } from 'wrangler'
import { root } from './dev-env.mjs'

/** `{ binding, name, id, migrationsDir }` per distinct database, the directory first (wrangler's default directory is `migrations`). */
export function d1Databases(configPath = join(root, 'wrangler.toml')) {
  const seen = new Set()
  const out = []
  for (const d of unstable_readConfig({ config: configPath }).d1_databases ?? []) {
    const id = d.database_id ?? d.binding
    if (seen.has(id)) continue
    seen.add(id)
    out.push({ binding: d.binding, name: d.database_name, id: d.database_id, migrationsDir: d.migrations_dir ?? 'migrations' })
  }
  return out
}

/**
 * Runs `wrangler d1 migrations apply` on each database (`--local` or `--remote`, plus `extraArgs`); answers the first
 * failure as `{ binding, status, output }`, or null. `configPath` may name another checkout's wrangler.toml (the
 * benchmarks compare with one): its own wrangler then applies its own migrations there.
 */
export function migrateAll(where, extraArgs = [], configPath = join(root, 'wrangler.toml')) {
  const checkout = dirname(configPath)
  for (const db of d1Databases(configPath)) {
    const args = [join(checkout, 'node_modules/wrangler/bin/wrangler.js'), 'd1', 'migrations', 'apply', db.binding, where, '--config', configPath, ...extraArgs]
    const r = spawnSync(process.execPath, args, {
      cwd: checkout,
      encoding: 'utf8',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
    })
    if (r.status !== 0) return { binding: db.binding, status: r.status ?? 1, output: `${r.stdout}${r.stderr}` }
  }
  return null
}
