// Verifying a webhook from the messaging gateway in Node (no dependencies). Copy verifyWebhook into your receiver;
// pass the body exactly as received (do not re-serialise parsed JSON). The bottom of this file lets the test suite
// run it against real deliveries: `node verify-signature.mjs < {"secret","headers","body"}` exits 0 when valid.
import { createHmac, timingSafeEqual } from 'node:crypto'

const TOLERANCE_S = 300 // reject deliveries signed more than 5 minutes ago (replayed requests)

/**
 * @param {string} secret  the subscription's signing secret (whsec_…)
 * @param {Record<string, string | string[] | undefined>} headers  request headers, lower-case names (Node's req.headers)
 * @param {string | Buffer} rawBody  the raw request body
 * @returns {boolean}
 */
export function verifyWebhook(secret, headers, rawBody, nowS = Math.floor(Date.now() / 1000)) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '')
  const signature = String(headers['x-webhook-signature'] ?? '')
  if (!/^\d+$/.test(timestamp) || !signature.startsWith('v1=')) return false
  if (Math.abs(nowS - Number(timestamp)) > TOLERANCE_S) return false
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')
  const given = signature.slice('v1='.length)
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}

// Example (node:http):
//   const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
//     const raw = Buffer.concat(chunks)
//     if (!verifyWebhook(process.env.WEBHOOK_SECRET, req.headers, raw)) { res.writeHead(401).end(); return }
//     const event = JSON.parse(raw.toString('utf8'))   // de-duplicate on req.headers['x-webhook-delivery']
//     res.writeHead(204).end()
//   })

if (import.meta.url === `file://${process.argv[1]}`) {
  const chunks = []
  for await (const c of process.stdin) chunks.push(c)
  const { secret, headers, body, now_s } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  process.exit(verifyWebhook(secret, headers, body, now_s) ? 0 : 1)
}
