// Applies the D1 migrations (the same files wrangler applies in dev and prod) before each test file, to the directory
// and every shard (DB_SHARD_0 is the directory's own database, so applying to it again finds nothing left to do).
import { applyD1Migrations } from 'cloudflare:test'
import { env } from 'cloudflare:workers'

for (const d1 of [env.DB, env.DB_SHARD_0, env.DB_SHARD_1]) await applyD1Migrations(d1, env.TEST_MIGRATIONS)
