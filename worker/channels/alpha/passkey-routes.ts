/**
 * alpha's passkey ceremony API (docs/channels/alpha.md, "When the phone asks for a passkey"), for the helper the owner
 * runs on web.whatsapp.com: authenticated by the ceremony's one-time token alone (no API key), and answering only
 * the helper's origin (CORS, ALPHA_PASSKEY_HELPER_ORIGINS). `GET` gives the request options, `POST` takes the
 * assertion and hands it straight to the relay holding the session: it is neither stored nor logged here. Opened
 * without a token (the owner opened the passkey link itself), the path shows the guide. The hosted connect page
 * confirms the code through `/confirm` with its own token.
 */
import { Hono } from 'hono'
import { canConfirmPasskey } from '../../account/session/passkey.shared'
import { passkeyHelperOrigins } from '../../config'
import { knownTenantDb } from '../../db/placement'
import type { AppEnv } from '../../env'
import { ApiError } from '../../errors'
import { accountStub, relayHub } from '../../lib/objects'
import { readCapped } from '../../lib/read-capped'
import type { LoginOutcome } from '../../../schema/frames'
import { PasskeyAssertion, parsePasskeyOptions } from '../../../schema/passkey'
import { maskPhone, PAGE_HEADERS } from '../account-page'
import { relayAccount } from '../relay-run/account'
import { sessionStatus } from '../relay-run/session'
import { ALPHA } from './connect'
import { ALPHA_PAGE } from './connect-token'
import { PASSKEY_GUIDE_CSP, passkeyGuideHtml } from './passkey-guide-html'
import { openCeremony, PASSKEY_API_PATH, type CeremonyClaims } from './passkey-token'

export const passkeyRoutes = new Hono<AppEnv>()

/** The relay asks alpha for the pairing ref, then sends the prologue (each IQ up to 15 s): the answer waits for both. */
export const PASSKEY_STEP_TIMEOUT_MS = 40_000
/** A `PublicKeyCredential.toJSON()` is about 1 KiB; nothing real comes near this. */
const ASSERTION_MAX_BYTES = 16 * 1024

passkeyRoutes.use(PASSKEY_API_PATH, async (c, next) => {
  const origin = c.req.header('origin')
  const allowed = origin !== undefined && passkeyHelperOrigins(c.env).has(origin)
  // A browser page of any other origin gets nothing; a client without an Origin (no browser) is judged by its token.
  if (origin !== undefined && !allowed)
    throw new ApiError(403, 'origin_not_allowed', `The passkey API answers the passkey helper on ${[...passkeyHelperOrigins(c.env)].join(', ')} only`)
  if (c.req.method === 'OPTIONS') {
    const headers: Record<string, string> = {
      'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '600',
      Vary: 'Origin',
    }
    if (origin) headers['Access-Control-Allow-Origin'] = origin
    return c.body(null, 204, headers)
  }
  await next()
  // Errors too: the helper must read why it was refused.
  if (origin) c.res.headers.set('Access-Control-Allow-Origin', origin)
  c.res.headers.append('Vary', 'Origin')
  for (const [k, v] of Object.entries(PAGE_HEADERS)) c.res.headers.set(k, v)
})

/** The ceremony the token names, still waiting for the assertion; or why not, as the documented refusal. */
async function waitingCeremony(env: Env, claims: CeremonyClaims, now: number) {
  await relayAccount(await knownTenantDb(env, claims.tenant), ALPHA, claims.tenant, claims.account)
  const { record } = await sessionStatus(env, claims.tenant, claims.account)
  const p = record?.passkey
  if (!record || !p || p.ceremony !== claims.ceremony)
    throw new ApiError(409, 'passkey_not_pending', 'This passkey ceremony is over; start linking again on the connect page')
  if (p.used) throw new ApiError(410, 'passkey_token_used', 'This passkey link was used already; it works once')
  if (now >= p.expiresAt) throw new ApiError(410, 'passkey_expired', 'The phone stopped waiting for the passkey; start linking again on the connect page')
  const options = parsePasskeyOptions(p.requestOptions)
  if (!options) throw new ApiError(502, 'upstream_error', 'The relay reported request options that do not parse')
  return { options, expiresAt: p.expiresAt }
}

passkeyRoutes.get(PASSKEY_API_PATH, async (c) => {
  if (!c.req.header('authorization')) return c.html(passkeyGuideHtml(), 200, { ...PAGE_HEADERS, 'Content-Security-Policy': PASSKEY_GUIDE_CSP })
  const claims = await openCeremony(c.env, c.req.header('authorization'), Date.now())
  const { options, expiresAt } = await waitingCeremony(c.env, claims, Date.now())
  return c.json({ success: true, request_options: options, expires_at: new Date(expiresAt).toISOString(), phone_number: maskPhone(claims.account) }, 200)
})

passkeyRoutes.post(PASSKEY_API_PATH, async (c) => {
  const claims = await openCeremony(c.env, c.req.header('authorization'), Date.now())
  const raw = await readCapped(c.req.raw.body, ASSERTION_MAX_BYTES)
  if (raw === null) throw new ApiError(413, 'body_too_large', `An assertion is at most ${ASSERTION_MAX_BYTES} bytes`)
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder().decode(raw))
  } catch {
    throw new ApiError(400, 'invalid_request', 'The body must be the JSON of the passkey credential (PublicKeyCredential.toJSON())')
  }
  const assertion = PasskeyAssertion.safeParse(json)
  if (!assertion.success)
    throw new ApiError(400, 'invalid_request', 'The body is not a passkey assertion (PublicKeyCredential.toJSON() of navigator.credentials.get())')
  await waitingCeremony(c.env, claims, Date.now())
  const claim = await accountStub(c.env, claims.tenant, claims.account).claimPasskey(claims.ceremony)
  if (!claim.ok) {
    if (claim.error === 'used') throw new ApiError(410, 'passkey_token_used', 'This passkey link was used already; it works once')
    if (claim.error === 'expired')
      throw new ApiError(410, 'passkey_expired', 'The phone stopped waiting for the passkey; start linking again on the connect page')
    throw new ApiError(409, 'passkey_not_pending', 'This passkey ceremony is over; start linking again on the connect page')
  }
  const outcome = await relayHub(c.env).loginStep(claim.sid, { kind: 'passkey_assertion', assertion: assertion.data }, PASSKEY_STEP_TIMEOUT_MS)
  return c.json(stepAnswer(outcome), 200)
})

/** The relay's verdict on a passkey step, or the refusal the page and the helper show. */
function stepAnswer(outcome: LoginOutcome | null) {
  if (!outcome) throw new ApiError(503, 'relay_unavailable', 'No relay answered for this session; the connect page shows how linking goes on')
  if (outcome.status === 'accepted') return { success: true as const, status: 'accepted' as const }
  if (outcome.status === 'refused' && outcome.error === 'no_login_pending') throw new ApiError(409, 'passkey_not_pending', outcome.message)
  throw new ApiError(
    422,
    'passkey_rejected',
    `alpha did not accept this step; linking stopped (${outcome.status === 'refused' ? outcome.message : outcome.status})`
  )
}

/** The owner's "the codes match", from the hosted connect page (its own signed token), when alpha asked for it. */
passkeyRoutes.post(`${PASSKEY_API_PATH}/confirm`, async (c) => {
  const page = await ALPHA_PAGE.open(c.env, c.req.query('token'), Date.now())
  const { record } = await sessionStatus(c.env, page.claims.tenant, page.claims.account)
  if (!canConfirmPasskey(record, Date.now())) throw new ApiError(409, 'passkey_not_pending', 'No code waits for your confirmation')
  return c.json(stepAnswer(await relayHub(c.env).loginStep(record.sid, { kind: 'passkey_confirm' }, PASSKEY_STEP_TIMEOUT_MS)), 200, PAGE_HEADERS)
})
