// `npm run reseal`: moves every sealed secret to the current sealing key (ENCRYPTION_KEY_ID) by calling
// POST /admin/secrets/reseal page by page until the walk is complete, then prints what is left under other keys.
// Safe to stop and run again (each page is idempotent; a new run starts over and skips what is done).
// GATEWAY_URL (default the local server) and ADMIN_TOKEN (default from .dev.vars) say where and as whom.
import { readDevVars } from './dev-env.mjs'

const baseUrl = (process.env.GATEWAY_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8787}`).replace(/\/+$/, '')
const token = process.env.ADMIN_TOKEN ?? readDevVars().ADMIN_TOKEN
const limit = Number(process.env.RESEAL_BATCH ?? 100)
if (!token) {
  console.error('No ADMIN_TOKEN: set ADMIN_TOKEN (and GATEWAY_URL for a deployed gateway), or run `npm start` once locally.')
  process.exit(1)
}

async function admin(method, path, body) {
  const res = await fetch(`${baseUrl}/admin${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json().catch(() => null)
  if (!res.ok) throw new Error(`${method} /admin${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

try {
  let cursor = null
  let resealed = 0
  const unreadable = []
  do {
    const page = await admin('POST', '/secrets/reseal', cursor ? { cursor, limit } : { limit })
    resealed += page.resealed
    unreadable.push(...page.unreadable)
    cursor = page.next_cursor
    process.stdout.write(`\rre-sealed ${resealed} value(s) under key ${page.key_id}`)
  } while (cursor)
  process.stdout.write('\n')
  const status = await admin('GET', '/secrets')
  for (const u of unreadable) console.error(`unreadable: ${u.column} tenant ${u.tenant_id} row ${u.row_id}: ${u.error}`)
  if (status.total_not_current === 0) {
    console.log(
      `every sealed value is under ${status.key_id}; keys that may now leave the ring: ${status.key_ids.filter((k) => k !== status.key_id).join(', ') || 'none'}`
    )
  } else {
    console.error(
      `${status.total_not_current} value(s) are not under ${status.key_id} yet: ${JSON.stringify(status.not_current)}; keep the old keys and run again`
    )
    process.exit(1)
  }
} catch (err) {
  console.error(`\nre-seal stopped: ${err.message}. Run it again to resume.`)
  process.exit(1)
}
