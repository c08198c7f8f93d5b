// `npm start`: the whole gateway locally. Applies the D1 migrations to the local database, runs the Worker under
// `wrangler dev` (local D1 and Durable Objects), makes sure a ready API key exists, and prints where everything is.
import { spawn, spawnSync } from 'node:child_process'
import { ensureDevVars, issueTenantKey, root, saveDevVar } from './dev-env.mjs'

const port = Number(process.env.PORT ?? 8787)
const base = `http://127.0.0.1:${port}`
const children = []

function stopAll(code = 0) {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
  setTimeout(() => process.exit(code), 300).unref()
}
process.on('SIGINT', () => stopAll(0))
process.on('SIGTERM', () => stopAll(0))

const vars = ensureDevVars()
const migrate = spawnSync('wrangler', ['d1', 'migrations', 'apply', 'DB', '--local'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
if (migrate.status !== 0) {
  process.stderr.write(migrate.stdout + migrate.stderr)
  process.exit(1)
}

const worker = spawn('wrangler', ['dev', '--port', String(port), '--ip', '127.0.0.1', '--show-interactive-dev-session=false'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
})
children.push(worker)
worker.stdout.on('data', (d) => process.env.GATEWAY_VERBOSE && process.stdout.write(d))
worker.stderr.on('data', (d) => process.stderr.write(d))
worker.on('exit', (code) => {
  console.error(`wrangler dev exited (${code})`)
  stopAll(code ?? 1)
})

async function ready(deadline) {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/v1/openapi.json`)
      if (res.ok) return true
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  return false
}

if (!(await ready(Date.now() + 90_000))) {
  console.error('The gateway did not come up within 90 s.')
  stopAll(1)
} else {
  let key = vars.DEV_API_KEY
  const ok = key && (await fetch(`${base}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } })).ok
  if (!ok) {
    key = (await issueTenantKey(base, vars.ADMIN_TOKEN)).key.key
    saveDevVar('DEV_API_KEY', key)
  }
  console.log(`
  Messaging gateway running locally (local D1 and Durable Objects under .wrangler/state)

  REST base URL   ${base}/v1
  MCP URL         ${base}/mcp
  API reference   ${base}/docs
  API key         ${key}
  Admin token     in .dev.vars (ADMIN_TOKEN); \`npm run key\` issues another tenant's key

  Try:  curl -H "Authorization: Bearer ${key}" ${base}/v1/usage
  Ctrl-C stops everything.
`)
}
