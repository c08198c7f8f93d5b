// `npm run deploy`: applies the D1 migrations to the remote directory and every shard, then deploys the Worker.
// Refuses to run while wrangler.toml still carries a placeholder database id or no PUBLIC_BASE_URL (the service's own
// hosts must be on the outbound denylist, and connect pages need it), with the steps that fix each.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { d1Databases } from './d1-databases.mjs'
import { root } from './dev-env.mjs'

const toml = readFileSync(join(process.env.DEPLOY_WRANGLER_TOML ?? join(root, 'wrangler.toml')), 'utf8')
const problems = []
const databases = d1Databases(process.env.DEPLOY_WRANGLER_TOML)
const placeholders = databases.filter((d) => /^0{8}-0{4}-0{4}-0{4}-0{9}\d{3}$/.test(d.id ?? ''))
if (placeholders.length > 0) {
  problems.push(`wrangler.toml still has placeholder D1 database ids (${placeholders.map((d) => d.binding).join(', ')}). First:
${placeholders.map((d) => `  npx wrangler d1 create ${d.name}      # paste the printed database_id into ${d.binding}${d.binding === 'DB' ? ' and DB_SHARD_0' : ''}`).join('\n')}
  npx wrangler secret put ADMIN_TOKEN           # at least 32 characters
  npx wrangler secret put ENCRYPTION_KEY`)
}
const base = /^\s*PUBLIC_BASE_URL\s*=\s*"([^"]*)"/m.exec(toml)?.[1] ?? ''
if (!/^https:\/\/[^/]+/.test(base)) {
  problems.push(`PUBLIC_BASE_URL in wrangler.toml [vars] is ${base ? `"${base}", not an https origin` : 'empty'}: set it to this deployment's
  public origin (https://gateway.example.com). The gateway refuses its own hosts as webhook, custom-channel and media
  targets through it, and the connect pages link to it.`)
}
if (problems.length > 0) {
  console.error(`${problems.join('\n\n')}\n\nthen run npm run deploy again.`)
  process.exit(1)
}
// The media bucket (wrangler.toml [[r2_buckets]]) is created once; an existing bucket is left as it is.
const bucket = /bucket_name\s*=\s*"([^"]+)"/.exec(toml)?.[1]
if (bucket) {
  const list = spawnSync('wrangler', ['r2', 'bucket', 'list'], { cwd: root, encoding: 'utf8' })
  if (list.status === 0 && !list.stdout.includes(bucket)) {
    const r = spawnSync('wrangler', ['r2', 'bucket', 'create', bucket], { cwd: root, stdio: 'inherit' })
    if (r.status !== 0) process.exit(r.status ?? 1)
  }
}
// The directory and every shard get the same migrations (docs/upgrading.md), then the Worker goes out.
for (const args of [...databases.map((d) => ['d1', 'migrations', 'apply', d.binding, '--remote']), ['deploy']]) {
  const r = spawnSync('wrangler', args, { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
}
