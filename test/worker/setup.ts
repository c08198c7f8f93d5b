// Applies the D1 migrations (the same files wrangler applies in dev and prod) before each test file.
import { applyD1Migrations } from 'cloudflare:test'
import { env } from 'cloudflare:workers'

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS)
