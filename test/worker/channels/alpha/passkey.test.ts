/**
 * alpha's passkey ceremony at the edge: the tenant setting (admin), the assign frame, the connect page's ceremony
 * state, the ceremony API (token only, CORS to web.whatsapp.com, one use), the code confirmation, the guide, and the
 * status an agent reads. The relay is a scripted one speaking the real frame protocol.
 */
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FrameOf } from '../../../../schema/frames'
import { signToken } from '../../../../worker/lib/signed-token'
import { admin, alteredToken, body, call, newTenant, type TestTenant } from '../../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../../relay-helpers'

const relays = closeRelaysAfterEach()
afterEach(() => {
  vi.useRealTimers()
})

const WA = 'https://web.whatsapp.com'
const CHALLENGE = 'FC6vcJgP-Ov_66yfWgoh1w8m_trR92BnFDhg-e5JEwk'
const OPTIONS = JSON.stringify({
  challenge: CHALLENGE,
  timeout: 600000,
  rpId: 'whatsapp.com',
  allowCredentials: [],
  userVerification: 'required',
  extensions: { uvm: true },
})
const ASSERTION = {
  id: 'Y3JlZC1pZA',
  rawId: 'Y3JlZC1pZA',
  type: 'public-key',
  authenticatorAttachment: 'platform',
  clientExtensionResults: {},
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
    signature: 'MEUCIQD1',
    userHandle: 'dXNlcg',
  },
}

async function withPasskeyLinking(t: TestTenant, on: boolean) {
  const res = await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { alpha_passkey_linking: on } })
  expect(res.status).toBe(200)
  expect(await body(res)).toMatchObject({ alpha_passkey_linking: on })
}

async function started(opts: { passkey?: boolean } = {}) {
  const t = await newTenant()
  if (opts.passkey !== false) await withPasskeyLinking(t, true)
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token)
  relays.push(relay)
  const phone = uniquePhone('1887')
  const r = await body<{ connect_url: string }>(await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone } }))
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  const page = new URL(r.connect_url).searchParams.get('token')!
  return { t, relay, assign, phone, page }
}

type PageState = {
  status: string
  reason: string | null
  can_restart: boolean
  passkey: null | { stage: string; link: string | null; code: string | null; confirm: boolean }
}
const pageState = async (page: string) => body<PageState>(await call(`/connect/alpha-web/state?token=${encodeURIComponent(page)}`))

/** The relay reports the phone's passkey demand; the page then hands out the passkey link. */
async function demanded(s: Awaited<ReturnType<typeof started>>) {
  await s.relay.state(s.assign, { state: 'passkey_required', requestOptions: OPTIONS, expiresAt: Date.now() + 600_000 })
  const st = await pageState(s.page)
  expect(st.passkey?.link).toMatch(/^https:\/\/gateway\.test\/connect\/alpha-web\/passkey#/)
  const link = new URL(st.passkey!.link!)
  return { api: link.pathname, token: link.hash.slice(1) }
}

const ceremony = (api: string, token: string | null, init: RequestInit & { json?: unknown; origin?: string | null } = {}) => {
  const { origin = WA, ...rest } = init
  const headers = new Headers(rest.headers)
  if (origin) headers.set('Origin', origin)
  if (token) headers.set('Authorization', `Bearer ${token}`)
  return call(api, { ...rest, headers })
}

/** Answers the next passkey login frame of the session like the relay, and hands back the frame. */
async function answer(s: Awaited<ReturnType<typeof started>>, outcome: FrameOf<'login_result'>['outcome']) {
  const frame = await s.relay.next('login', (f) => f.sid === s.assign.sid)
  s.relay.send({ type: 'login_result', id: frame.id, sid: frame.sid, outcome })
  return frame
}

describe('the alpha_passkey_linking setting', () => {
  it('is off for a new tenant, set by the admin, and travels in the assign frame', async () => {
    const t = await newTenant()
    expect(await body(await admin(`/admin/tenants/${t.tenantId}`))).toMatchObject({ alpha_passkey_linking: false })
    const off = await started({ passkey: false })
    expect(off.assign.passkeyLinking).toBe(false)
    const on = await started()
    expect(on.assign.passkeyLinking).toBe(true)
  })

  it('is refused without the admin token', async () => {
    const t = await newTenant()
    const res = await call(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { alpha_passkey_linking: true }, key: t.key })
    expect(res.status).toBe(401)
  })

  it('off: the phone’s demand ends linking with passkey_required, not restartable, and the page points at the guide', async () => {
    const s = await started({ passkey: false })
    await s.relay.state(s.assign, { state: 'disconnected', problem: 'passkey_required', message: 'passkey linking is off' })
    expect(await pageState(s.page)).toMatchObject({ status: 'disconnected', reason: 'passkey_required', can_restart: false, passkey: null })
    const html = await (await call(`/connect/alpha-web?token=${encodeURIComponent(s.page)}`)).text()
    expect(html).toContain('/connect/alpha-web/passkey')
  })
})

describe('the connect page during a passkey ceremony', () => {
  it('shows the one-time passkey link, then the accepted state, then the code', async () => {
    const s = await started()
    await demanded(s)
    const status = await body(await call(`/v1/channels/alpha-web/connections/${encodeURIComponent(s.phone)}/status`, { key: s.t.key }))
    expect(status).toMatchObject({ status: 'connecting', reason: 'passkey_required', message: expect.stringContaining('connect page') })

    await s.relay.state(s.assign, { state: 'connecting' })
    expect((await pageState(s.page)).passkey).toMatchObject({ stage: 'waiting' })
    await s.relay.state(s.assign, { state: 'passkey_code', code: 'ABCD-2345', confirm: false, expiresAt: Date.now() + 180_000 })
    expect((await pageState(s.page)).passkey).toMatchObject({ stage: 'code', code: 'ABCD-2345', confirm: false, link: null })
    const status2 = await body(await call(`/v1/channels/alpha-web/connections/${encodeURIComponent(s.phone)}/status`, { key: s.t.key }))
    expect(status2).toMatchObject({ status: 'connecting', reason: 'passkey_code', message: expect.stringContaining('ABCD-2345') })
    await s.relay.state(s.assign, { state: 'connected', identifier: s.phone, upstreamUserId: null })
    expect(await pageState(s.page)).toMatchObject({ status: 'connected', passkey: null })
  })

  it('offers a restart after a ceremony ended (the relay never retries it)', async () => {
    const s = await started()
    await demanded(s)
    await s.relay.state(s.assign, { state: 'disconnected', problem: 'passkey_rejected', message: 'alpha refused' })
    expect(await pageState(s.page)).toMatchObject({ status: 'disconnected', reason: 'passkey_rejected', can_restart: true, passkey: null })
  })
})

describe('GET and POST /connect/alpha-web/passkey (the ceremony API)', () => {
  it('gives the request options for the token, only to web.whatsapp.com, with CORS', async () => {
    const s = await started()
    const { api, token } = await demanded(s)
    const pre = await ceremony(api, null, {
      method: 'OPTIONS',
      headers: { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe(WA)
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/)
    const res = await ceremony(api, token)
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(WA)
    expect(await body(res)).toMatchObject({ success: true, request_options: JSON.parse(OPTIONS), phone_number: expect.stringContaining(s.phone.slice(-3)) })
    expect((await ceremony(api, token, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await ceremony(api, token, { method: 'OPTIONS', origin: 'https://evil.example' })).headers.get('access-control-allow-origin')).toBeNull()
  })

  it('hands the assertion to the relay once, as whatsmeow’s fields only, and refuses it replayed', async () => {
    const s = await started()
    const { api, token } = await demanded(s)
    const post = ceremony(api, token, { method: 'POST', json: ASSERTION })
    const frame = await answer(s, { status: 'accepted' })
    expect(frame.step).toEqual({
      kind: 'passkey_assertion',
      assertion: { id: ASSERTION.id, rawId: ASSERTION.rawId, type: 'public-key', response: ASSERTION.response },
    })
    const res = await post
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(WA)
    expect(await body(res)).toEqual({ success: true, status: 'accepted' })
    expect((await pageState(s.page)).passkey).toMatchObject({ stage: 'accepted', link: null })

    const replay = await ceremony(api, token, { method: 'POST', json: ASSERTION })
    expect(replay.status).toBe(410)
    expect(await body(replay)).toMatchObject({ error: expect.stringContaining('once') })
    expect((await ceremony(api, token)).status).toBe(410)
    expect(s.relay.frames.some((f) => f.type === 'login')).toBe(false)
  })

  it('refuses a wrong token (403), no token (401), another purpose’s token (403), and another ceremony’s (409)', async () => {
    const s = await started()
    const { api, token } = await demanded(s)
    expect((await ceremony(api, alteredToken(token))).status).toBe(403)
    expect((await ceremony(api, null, { method: 'POST', json: ASSERTION })).status).toBe(401)
    const pageToken = await signToken(
      env.ENCRYPTION_KEY,
      'alpha-connect-page',
      { tenant: s.t.tenantId, account: s.phone, ceremony: CHALLENGE },
      Date.now() + 60_000
    )
    expect((await ceremony(api, pageToken)).status).toBe(403)
    await s.relay.state(s.assign, {
      state: 'passkey_required',
      requestOptions: OPTIONS.replace(CHALLENGE, 'B'.repeat(43)),
      expiresAt: Date.now() + 600_000,
    })
    const stale = await ceremony(api, token)
    expect(stale.status).toBe(409)
    expect(await body(stale)).toMatchObject({ error: expect.stringContaining('over') })
  })

  it('refuses an expired challenge with 410 and a malformed assertion with 400, sending nothing to the relay', async () => {
    const s = await started()
    const { api, token } = await demanded(s)
    expect((await ceremony(api, token, { method: 'POST', json: { ...ASSERTION, type: 'password' } })).status).toBe(400)
    expect((await ceremony(api, token, { method: 'POST', body: 'not json', headers: { 'Content-Type': 'application/json' } })).status).toBe(400)
    expect((await ceremony(api, token, { method: 'POST', body: 'x'.repeat(20_000) })).status).toBe(413)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 601_000)
    const late = await ceremony(api, token, { method: 'POST', json: ASSERTION })
    expect(late.status).toBe(410)
    expect(await body(late)).toMatchObject({ error: expect.stringContaining('expired') })
    expect(s.relay.frames.some((f) => f.type === 'login')).toBe(false)
  })

  it('answers 422 passkey_rejected when alpha refused the assertion', async () => {
    const s = await started()
    const { api, token } = await demanded(s)
    const post = ceremony(api, token, { method: 'POST', json: ASSERTION })
    await answer(s, { status: 'refused', error: 'login_failed', message: 'alpha did not take the passkey', retryAfterS: null })
    const res = await post
    expect(res.status).toBe(422)
    expect(await body(res)).toMatchObject({ error: expect.stringContaining('alpha did not take the passkey') })
  })

  it('serves the guide, with the bookmarklet, when the passkey link itself is opened', async () => {
    const res = await call('/connect/alpha-web/passkey')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await res.text()
    expect(html).toContain('web.whatsapp.com')
    expect(html).toMatch(/id="bookmarklet" href="javascript:/)
  })
})

describe('POST /connect/alpha-web/passkey/confirm (the owner says the codes match)', () => {
  it('passes the confirmation to the relay only while a code waits for it, with the page token', async () => {
    const s = await started()
    await demanded(s)
    const confirm = (token = s.page) => call(`/connect/alpha-web/passkey/confirm?token=${encodeURIComponent(token)}`, { method: 'POST' })
    expect((await confirm()).status).toBe(409)
    await s.relay.state(s.assign, { state: 'passkey_code', code: 'ABCD-2345', confirm: true, expiresAt: Date.now() + 300_000 })
    expect((await pageState(s.page)).passkey).toMatchObject({ stage: 'code', confirm: true })
    expect((await confirm(alteredToken(s.page))).status).toBe(403)
    const pending = confirm()
    const frame = await answer(s, { status: 'accepted' })
    expect(frame.step).toEqual({ kind: 'passkey_confirm' })
    expect((await pending).status).toBe(200)
  })
})
