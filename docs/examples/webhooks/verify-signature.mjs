// Verifying a webhook from the messaging gateway in Node (no dependencies). Copy verifyWebhook into your receiver;
// pass the body exactly as received (do not re-serialise parsed JSON). The bottom of this file lets the test suite
// run it against real deliveries: `node verify-signature.mjs < {"secret","headers","body"}` exits 0 when valid.
import { createHmac, timingSafeEqual } from 'node:crypto'

const TOLERANCE_S = 300 // reject deliveries signed more than 5 minutes ago (replayed requests)

/**
 * @param {string} secret  the subscription's signing secret (whsec_…)
 * @param {Record<string, string | string[] | undefined>} headers  request headers, lower-case names (Node's req.headers)
 * @param {string | Buffer} rawBody  the raw request body
 * @returns {Record<string, unknown> | null}  the event when the delivery is genuine, else null
 */
export function verifyWebhook(secret, headers, rawBody, nowS = Math.floor(Date.now() / 1000)) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '')
  const signature = String(headers['x-webhook-signature'] ?? '')
  if (!/^\d+$/.test(timestamp) || !signature.startsWith('v1=')) return null
  if (Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) return null
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')
  const given = signature.slice('v1='.length)
  if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) return null
  const event = JSON.parse(rawBody.toString('utf8'))
  // The delivery id is signed inside the body: a body re-sent under another X-Webhook-Delivery is refused.
  if (event.delivery_id !== headers['x-webhook-delivery']) return null
  return event
}

// Example (node:http), de-duplicating on the signed delivery_id (the same on every retry and replay):
//   const seen = new Set()   // use your database in production, kept at least as long as retries run (a day)
//   const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
//     const event = verifyWebhook(process.env.WEBHOOK_SECRET, req.headers, Buffer.concat(chunks))
//     if (!event) { res.writeHead(401).end(); return }
//     if (!seen.has(event.delivery_id)) { seen.add(event.delivery_id); handle(event) }
//     res.writeHead(204).end()
//   })

if (import.meta.url === `file://${process.argv[1]}`) {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  const { secret, headers, body, now_s } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  process.exit(verifyWebhook(secret, headers, body, now_s) ? 0 : 1)
}
