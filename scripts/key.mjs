// `npm run key`: creates a tenant on the running local gateway and prints its API key (shown once).
import { issueTenantKey, readDevVars } from './dev-env.mjs'

const baseUrl = process.env.GATEWAY_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8787}`
const token = process.env.ADMIN_TOKEN ?? readDevVars().ADMIN_TOKEN
if (!token) {
  console.error('No ADMIN_TOKEN: run `npm start` once (it writes .dev.vars) or set ADMIN_TOKEN.')
  process.exit(1)
}
try {
  const { tenant, key } = await issueTenantKey(baseUrl, token, process.argv[2] ?? 'free')
  console.log(`tenant ${tenant.id} (plan ${tenant.plan})`)
  console.log(key.key)
} catch (err) {
  console.error(`Could not reach the gateway at ${baseUrl}: ${err.message}. Is \`npm start\` running?`)
  process.exit(1)
}
