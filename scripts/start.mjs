// `npm start`: the whole gateway locally. Applies the D1 migrations to the local directory and both shards, runs the
// Worker as `wrangler dev` would (local D1 and Durable Objects) with every outbound fetch() guarded (dev-worker.mjs), makes sure
// a ready API key exists, starts a relay with a token it issues through the admin API, and prints where everything is.
// `npm start -- --sim` (or RELAY_DRIVER=sim) runs the relay with simulated phones and prints the simulator's control
// API, so the whole flow works offline.
import { spawn } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ensureDevVars, ensureRelayToken, issueTenantKey, root, saveDevVar } from './dev-env.mjs'
import { startDevWorker } from './dev-worker.mjs'
import { providerVars } from './provider-vars.mjs'

const port = Number(process.env.PORT ?? 8787)
const base = `http://127.0.0.1:${port}`
const sim = process.argv.includes('--sim') || process.env.RELAY_DRIVER === 'sim'
const driver = sim ? 'sim' : (process.env.RELAY_DRIVER ?? 'alpha')
const children = []
let worker = null

function stopAll(code = 0) {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
  worker?.dispose().catch(() => {})
  setTimeout(() => process.exit(code), 1500).unref()
}
process.on('SIGINT', () => stopAll(0))
process.on('SIGTERM', () => stopAll(0))

const vars = ensureDevVars()

process.env.WRANGLER_SEND_METRICS ??= 'false'
try {
  worker = await startDevWorker({
    port,
    ip: '127.0.0.1',
    // Provider base URLs go through when set (provider-vars.mjs), so a local fake can stand in for Twilio or Graph.
    vars: providerVars(process.env),
    // As the Worker reads it (worker/config.ts): loopback URLs pass the guard only when they pass the URL check.
    allowLoopback: ['true', '1', 'yes'].includes((vars.ALLOW_LOOPBACK_URLS ?? '').toLowerCase()),
    logLevel: process.env.GATEWAY_VERBOSE ? 'log' : 'warn',
  })
} catch (err) {
  console.error(`The Worker did not start: ${err.message}`)
  stopAll(1)
}

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

/** Starts a TypeScript entry with node + the tsx loader and resolves with the first stdout line `pick` accepts. */
function startNode(entry, env, logFile, pick, timeoutMs = 30_000) {
  const child = spawn('node', ['--import', 'tsx', entry], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const log = createWriteStream(logFile, { flags: 'a' })
  let partial = ''
  let done = false
  return {
    child,
    first: new Promise((resolve, reject) => {
      const timer = setTimeout(() => !done && reject(new Error(`${entry} did not start within ${timeoutMs / 1000} s (see ${logFile})`)), timeoutMs)
      child.on('exit', (code) => !done && (clearTimeout(timer), reject(new Error(`${entry} exited (${code}); see ${logFile}`))))
      child.stdout.on('data', (d) => {
        log.write(d)
        partial += d.toString()
        const lines = partial.split('\n')
        partial = lines.pop() ?? ''
        for (const line of lines) {
          const got = !done && pick(line)
          if (got) {
            done = true
            clearTimeout(timer)
            resolve(got)
          }
          // The relay logs JSON; its warnings and errors are worth seeing in the terminal.
          if (/"level":"(warn|error|fatal)"/.test(line)) process.stderr.write(`[relay] ${line}\n`)
        }
      })
      child.stderr.on('data', (d) => (log.write(d), process.stderr.write(d)))
    }),
  }
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

  const logDir = join(root, '.dev')
  mkdirSync(logDir, { recursive: true })
  let relayLine = ''
  let simUrl = null
  let healthUrl = null
  try {
    const relayToken = await ensureRelayToken(base, vars.ADMIN_TOKEN, vars)
    if (sim) {
      const net = startNode(
        'relay/sim/network/main.ts',
        { SIM_PORT: process.env.SIM_PORT ?? '0' },
        join(logDir, 'sim.log'),
        (l) => /^Sim control API: (\S+)/.exec(l)?.[1]
      )
      simUrl = await net.first
    }
    const relay = startNode(
      'relay/main.ts',
      {
        GATEWAY_URL: base,
        RELAY_TOKEN: relayToken,
        RELAY_SESSION_KEY: vars.RELAY_SESSION_KEY,
        RELAY_DRIVER: driver,
        RELAY_HEALTH_PORT: process.env.RELAY_HEALTH_PORT ?? '8790',
        ...(simUrl ? { RELAY_SIM_URL: simUrl.replace(/\/sim$/, '') } : {}),
      },
      join(logDir, 'relay.log'),
      (l) => (l.includes('"msg":"relay started"') ? (JSON.parse(l).health ?? 'off') : undefined)
    )
    healthUrl = await relay.first
    relay.child.on('exit', (code) => code !== 0 && console.error(`The relay stopped (exit ${code}); see .dev/relay.log. The gateway keeps running.`))
    relayLine = `Relay           driver ${driver}, health ${healthUrl}, logs .dev/relay.log`
  } catch (err) {
    relayLine = `Relay           not running: ${err.message}${sim ? '' : '\n                (no alpha driver in this build? try `npm start -- --sim`)'}`
  }

  // The simulator gets its own tenant and key: the tour connects the custom channel on the main key, and a free plan
  // holds one account, so the printed --sim commands would otherwise answer 409 account_cap_reached.
  // beta's script gets a third tenant for the same reason: alpha's script already holds SIM_KEY's one place.
  // They live on shard 1 (the tour's tenant on shard 0, the directory's own database), so a day with the simulator
  // runs both shards.
  async function simTenantKey(name) {
    const saved = vars[name]
    if (saved && (await fetch(`${base}/v1/usage`, { headers: { Authorization: `Bearer ${saved}` } })).ok) return saved
    const issued = (await issueTenantKey(base, vars.ADMIN_TOKEN, 'free', 1)).key.key
    saveDevVar(name, issued)
    return issued
  }
  const simKey = simUrl ? await simTenantKey('DEV_SIM_API_KEY') : null
  const simBetaKey = simUrl ? await simTenantKey('DEV_SIM_BETA_API_KEY') : null

  const phone = '%2B15551234567'
  const betaPhone = '%2B15557654321'
  const simTour = simUrl
    ? `
  Sim control API ${simUrl}
  Try the whole flow offline (the sim plays the phone and its contacts; its own key, so the tour's account does
  not take the free plan's one place):
    export SIM_KEY=${simKey}
    curl -H "Authorization: Bearer $SIM_KEY" -H 'Content-Type: application/json' \\
         -d '{"phone_number":"+15551234567"}' ${base}/v1/channels/alpha-web/connections
    curl -X POST ${simUrl}/alpha/${phone}/link
    curl -X POST -H 'Content-Type: application/json' -d '{"from":"+447700900123","text":"Hi!"}' ${simUrl}/alpha/${phone}/inbound
    curl -H "Authorization: Bearer $SIM_KEY" ${base}/v1/messages
    curl ${simUrl}/alpha/${phone}/outbox          # what the contacts received from your replies
  beta, by code (the sim shows the code its app received; its own key too):
    export SIM_BETA_KEY=${simBetaKey}
    curl -H "Authorization: Bearer $SIM_BETA_KEY" -H 'Content-Type: application/json' \\
         -d '{"phone_number":"+15557654321","mode":"code"}' ${base}/v1/channels/beta/connect
    CODE=$(curl -s ${simUrl}/beta/${betaPhone}/code | sed 's/.*"code":"\\([0-9]*\\)".*/\\1/')
    curl -H "Authorization: Bearer $SIM_BETA_KEY" -H 'Content-Type: application/json' \\
         -d "{\\"code\\":\\"$CODE\\"}" ${base}/v1/channels/beta/connect/${betaPhone}/code
    curl -X POST -H 'Content-Type: application/json' -d '{"from":"+447700900124","text":"Hi beta!"}' ${simUrl}/beta/${betaPhone}/inbound
    curl ${simUrl}/beta/${betaPhone}/outbox           # docs/simulator.md: passwords, QR, flood, stranger, ban, logout
`
    : ''
  console.log(`
  Messaging gateway running locally (local D1 and Durable Objects under .wrangler/state)
  D1: the directory plus shard 0 (your tour's tenant) and shard 1 (the simulator's tenants); GET /admin/shards

  REST base URL   ${base}/v1
  MCP URL         ${base}/mcp
  API reference   ${base}/docs
  API key         ${key}
  Admin token     in .dev.vars (ADMIN_TOKEN); \`npm run key\` issues another tenant's key
  ${relayLine}
${simTour}
  Try:  export GW=${base}/v1 KEY=${key}
        curl -H "Authorization: Bearer $KEY" $GW/usage
  Docs  README.md (start here: the five-minute tour), guides and reference in docs/
  Ctrl-C stops everything.
`)
}
