/**
 * The page inbox's routes that authenticate by their own means, never by API key (under /v1/channels/meta, mounted
 * ahead of the key check): the hosted connect page (signed, expiring token), the OAuth callback (single-use state),
 * and the per-app webhook (verify token for the handshake, X-Hub-Signature-256 under that app's secret for events).
 */
import { Hono } from 'hono'
import { publicOrigin } from '../../config'
import { knownTenantDb } from '../../db/placement'
import { directory } from '../../db/shards'
import { socialAppByWebhook } from '../../db/social'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { timingSafeEqual } from '../../lib/crypto'
import { appSecrets, connectPage, oauthCallback, SOCIAL_PATH } from './connect'
import { callbackPageHtml, connectPageHtml, errorPageHtml } from './connect-page-html'
import { applyWebhookEvents } from './inbound'
import { WebhookPayload, webhookEvents } from './payloads'
import { SIGNATURE_HEADER, verifyHubSignature } from './signature'

/** Mounted at the root (contract: public routes name their full paths). */
export const socialPublicRoutes = new Hono<AppEnv>().basePath(SOCIAL_PATH)

const HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}

socialPublicRoutes.get('/connect/page', async (c) => {
  const page = await connectPage(c.env, c.req.url, c.req.query('token'), Date.now())
  if (!page.ok) return c.html(errorPageHtml(page.title, page.message), page.status, HEADERS)
  return c.html(connectPageHtml(page), 200, HEADERS)
})

socialPublicRoutes.get('/oauth/callback', async (c) => {
  const q = c.req.query()
  const outcome = await oauthCallback(c.env, c.req.url, q, Date.now())
  if (!outcome.ok) return c.html(errorPageHtml(outcome.title, outcome.message), outcome.status, HEADERS)
  return c.html(callbackPageHtml(outcome.pages), 200, HEADERS)
})

/** Graph's verification handshake (upstreams 5.2): echo `hub.challenge` when the verify token is this app's. */
socialPublicRoutes.get('/webhooks/:webhookId', async (c) => {
  const app = await socialAppByWebhook(directory(c.env), c.req.param('webhookId'))
  const mode = c.req.query('hub.mode')
  const token = c.req.query('hub.verify_token')
  const challenge = c.req.query('hub.challenge')
  // The verify token is a secret shared with the provider: compared in constant time, like every other secret here.
  if (!app || mode !== 'subscribe' || !timingSafeEqual(token ?? '', app.verifyToken) || !challenge) {
    throw new ApiError(403, 'verification_failed', 'The verify token does not match this callback URL')
  }
  return c.text(challenge, 200)
})

socialPublicRoutes.post('/webhooks/:webhookId', async (c) => {
  const app = await socialAppByWebhook(directory(c.env), c.req.param('webhookId'))
  if (!app) throw new ApiError(404, 'not_found', 'No app has this callback URL')
  // The signature covers the bytes as sent: read them raw, check, and only then parse.
  const raw = new Uint8Array(await c.req.arrayBuffer())
  const { secret } = await appSecrets(c.env, app)
  if (!(await verifyHubSignature(secret, raw, c.req.header(SIGNATURE_HEADER)))) {
    throw new ApiError(403, 'invalid_signature', `${SIGNATURE_HEADER} does not match this app's secret`)
  }
  let body: unknown
  try {
    body = JSON.parse(new TextDecoder().decode(raw))
  } catch {
    throw new ApiError(400, 'invalid_payload', 'The body is not JSON')
  }
  const payload = WebhookPayload.safeParse(body)
  // Signed by the app but not a messaging payload of a page or Instagram account (another object, another shape):
  // acknowledged so Graph does not retry it, and nothing is stored.
  if (!payload.success) return c.json({ success: true, stored: 0, queued: 0, duplicates: 0, receipts: 0, reactions: 0, ignored: 1 }, 200)
  const tally = await applyWebhookEvents(
    c.env,
    await knownTenantDb(c.env, app.tenantId),
    app.tenantId,
    webhookEvents(payload.data),
    publicOrigin(c.env, c.req.url)
  )
  return c.json({ success: true, ...tally }, 200)
})
