/**
 * /v1/channels/beta/connect/page: beta's hosted login page, its state endpoint and its code and password
 * submissions, reached with the signed token of `connect_url` only, against a scripted relay on a real WebSocket:
 * the token rules (403/410), the state through each step, submissions that reach the login exactly as the REST verify
 * routes do (same answers, same errors, one shared rate limit), the key check skipped for exactly these paths, and
 * the OpenAPI entries.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FrameOf } from '../../../../schema/frames'
import { app } from '../../../../worker/app'
import { signToken } from '../../../../worker/lib/signed-token'
import { RATE_LIMITS } from '../../../../worker/lib/rate-limit'
import { admin, alteredToken, body, call, newTenant, ORIGIN, type TestTenant } from '../../helpers'
import { fixedWindowLimiter } from '../../fixed-window-limiter'
import { callTool } from '../../mcp/rpc'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../../relay-helpers'

const relays = closeRelaysAfterEach()
const newPhone = () => uniquePhone('1455')
const PAGE = '/v1/channels/beta/connect/page'
const THIRTY_MIN = 30 * 60_000

afterEach(() => {
  vi.useRealTimers()
})

async function betaRelay(t: TestTenant): Promise<FakeRelay> {
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token, { channels: ['beta'] })
  relays.push(relay)
  return relay
}

type ConnectAnswer = { status: string; connect_url: string | null; connect_url_expires_at: number | null }

/** A connect call whose relay reports `first` as the login's first step; answers the page's token too. */
async function started(t: TestTenant, relay: FakeRelay, mode: 'code' | 'qr', first: FrameOf<'state'>['state']) {
  const phone = newPhone()
  const pending = call('/v1/channels/beta/connect', { method: 'POST', key: t.key, json: { phone_number: phone, mode } })
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  await relay.state(assign, first)
  const answer = await body<ConnectAnswer>(await pending)
  const url = new URL(answer.connect_url!)
  return { phone, assign, answer, url, token: url.searchParams.get('token')! }
}

const codeStarted = (t: TestTenant, relay: FakeRelay) => started(t, relay, 'code', { state: 'code_required', expiresAt: Date.now() + THIRTY_MIN })

const q = (token: string) => `?token=${encodeURIComponent(token)}`
const state = (token: string) => call(`${PAGE}/state${q(token)}`)
const pageStep = (token: string, step: 'code' | 'password', json: unknown) => call(`${PAGE}/${step}${q(token)}`, { method: 'POST', json })
const restStep = (t: TestTenant, phone: string, step: 'code' | 'password', json: unknown) =>
  call(`/v1/channels/beta/connect/${encodeURIComponent(phone)}/${step}`, { method: 'POST', key: t.key, json })

/** Answers the next login frame of the session like a relay, and hands back the frame. */
async function answerLogin(relay: FakeRelay, assign: FrameOf<'assign'>, outcome: FrameOf<'login_result'>['outcome']) {
  const frame = await relay.next('login', (f) => f.sid === assign.sid)
  relay.send({ type: 'login_result', id: frame.id, sid: frame.sid, outcome })
  return frame
}

describe('connect_url of POST /v1/channels/beta/connect', () => {
  it('points at the hosted page with a token valid about 30 minutes, in code and in qr mode', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const before = Date.now()
    const code = await codeStarted(t, relay)
    expect(code.answer.status).toBe('code_required')
    expect(code.url.origin + code.url.pathname).toBe(`${ORIGIN}${PAGE}`)
    expect(code.answer.connect_url_expires_at).toBeGreaterThanOrEqual(before + THIRTY_MIN)
    expect(code.answer.connect_url_expires_at).toBeLessThanOrEqual(Date.now() + THIRTY_MIN)
    const other = await newTenant()
    const qr = await started(other, await betaRelay(other), 'qr', { state: 'qr_pending', qr: 'tg://login?token=QrTok1', expiresAt: Date.now() + 30_000 })
    expect(qr.answer).toMatchObject({ status: 'qr_required', connect_url: expect.stringContaining(`${PAGE}?token=`) })
    expect(qr.answer.connect_url_expires_at! - Date.now()).toBeGreaterThan(THIRTY_MIN - 60_000)
  })

  it('is null for an account that is already connected', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign } = await codeStarted(t, relay)
    await relay.state(assign, { state: 'connected', identifier: phone, upstreamUserId: '7100001' })
    const again = await body(await call('/v1/channels/beta/connect', { method: 'POST', key: t.key, json: { phone_number: phone } }))
    expect(again).toMatchObject({ status: 'connected', connect_url: null, connect_url_expires_at: null })
  })

  it('comes with the MCP tool connect_beta too', async () => {
    const t = await newTenant()
    const answer = await callTool(t.key, 'connect_beta', { body: { phone_number: newPhone() } })
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ status: 'initializing', connect_url: expect.stringContaining(`${PAGE}?token=`) })
    expect(answer.json.connect_url_expires_at).toBeGreaterThan(Date.now() + THIRTY_MIN - 60_000)
  })
})

describe('GET /v1/channels/beta/connect/page', () => {
  it('serves the phone-sized page without an API key, with a strict CSP, no caching and no referrer', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { url, phone } = await codeStarted(t, relay)
    const res = await call(url.pathname + url.search)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'nonce-[0-9A-Za-z]+'.*form-action 'none'/)
    const html = await res.text()
    expect(html).toContain('Log in your beta account')
    expect(html).toContain('name="viewport"')
    expect(html).not.toContain(phone)
    expect(html).toContain(phone.slice(-3))
  })

  it('answers 403 without a token, for an altered one and for one signed for another page; 410 once it is 30 minutes old', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { token, phone } = await codeStarted(t, relay)
    const missing = await call(PAGE)
    expect(missing.status).toBe(403)
    expect(missing.headers.get('cache-control')).toBe('no-store')
    expect(await missing.text()).toContain('Link not valid')
    expect((await call(`${PAGE}?token=${alteredToken(token)}`)).status).toBe(403)
    const alphaToken = await signToken(env.ENCRYPTION_KEY, 'alpha-connect-page', { tenant: t.tenantId, account: phone }, Date.now() + 60_000)
    expect((await call(`${PAGE}${q(alphaToken)}`)).status).toBe(403)
    expect(await body(await state(alphaToken))).toEqual({ success: false, error: 'This link is not valid', error_code: 403 })

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + THIRTY_MIN + 1000)
    const expired = await call(`${PAGE}${q(token)}`)
    expect(expired.status).toBe(410)
    expect(await expired.text()).toContain('Link expired')
    expect(await body(await state(token))).toEqual({ success: false, error: expect.stringContaining('expired'), error_code: 410 })
    expect((await pageStep(token, 'code', { code: '12345' })).status).toBe(410)
    expect(relay.frames.some((f) => f.type === 'login')).toBe(false)
  })

  it('stops working once the tenant’s API is switched off', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { token } = await codeStarted(t, relay)
    expect((await admin(`/admin/tenants/${t.tenantId}`, { method: 'PATCH', json: { api_enabled: false } })).status).toBe(200)
    expect((await state(token)).status).toBe(403)
    expect((await pageStep(token, 'code', { code: '12345' })).status).toBe(403)
  })
})

describe('GET /v1/channels/beta/connect/page/state', () => {
  it('follows a code login: code_required, password_required, connected', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { assign, token, answer } = await codeStarted(t, relay)
    const s1 = await state(token)
    expect(s1.headers.get('cache-control')).toBe('no-store')
    expect(await body(s1)).toEqual({
      status: 'code_required',
      reason: null,
      message: null,
      mode: 'code',
      qr_data_url: null,
      qr_expires_at: null,
      page_expires_at: answer.connect_url_expires_at,
    })
    await relay.state(assign, { state: 'password_required', hint: null, expiresAt: null })
    expect(await body(await state(token))).toMatchObject({ status: 'password_required', mode: 'code' })
    await relay.state(assign, { state: 'connected', identifier: '+1', upstreamUserId: '7100002' })
    expect(await body(await state(token))).toMatchObject({ status: 'connected', reason: null })
  })

  it('shows the QR as a PNG, a new one when the relay replaces the token, none once it lapsed, then the password step', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const expiresAt = Date.now() + 30_000
    const { assign, token } = await started(t, relay, 'qr', { state: 'qr_pending', qr: 'tg://login?token=First-_1', expiresAt })
    const s1 = await body<{ qr_data_url: string; qr_expires_at: number }>(await state(token))
    expect(s1).toMatchObject({ status: 'initializing', mode: 'qr', qr_data_url: expect.stringMatching(/^data:image\/png;base64,/), qr_expires_at: expiresAt })
    // The replacement lapses in a second, so the clock below moves less than a relay heartbeat.
    const secondExpiresAt = Date.now() + 1000
    await relay.state(assign, { state: 'qr_pending', qr: 'tg://login?token=Second_2', expiresAt: secondExpiresAt })
    const s2 = await body<{ qr_data_url: string; qr_expires_at: number }>(await state(token))
    expect(s2.qr_data_url).toMatch(/^data:image\/png;base64,/)
    expect(s2.qr_data_url).not.toBe(s1.qr_data_url)
    expect(s2.qr_expires_at).toBe(secondExpiresAt)

    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(secondExpiresAt + 1)
    expect(await body(await state(token))).toMatchObject({ status: 'initializing', qr_data_url: null, qr_expires_at: null })
    vi.useRealTimers()

    await relay.state(assign, { state: 'password_required', hint: 'pet', expiresAt: null })
    expect(await body(await state(token))).toMatchObject({ status: 'password_required', mode: 'qr', qr_data_url: null })
  })

  it('says why a login stopped, and that a removed number is gone', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign, token } = await codeStarted(t, relay)
    await relay.state(assign, { state: 'disconnected', problem: 'link_expired', message: 'The login was not finished in time.' })
    expect(await body(await state(token))).toMatchObject({ status: 'disconnected', reason: 'link_expired' })
    await call(`/v1/channels/beta/${encodeURIComponent(phone)}`, { method: 'DELETE', key: t.key })
    expect(await body(await state(token))).toMatchObject({ status: 'not_initialized', reason: 'removed', mode: null })
    const gone = await pageStep(token, 'code', { code: '12345' })
    expect(gone.status).toBe(404)
  })
})

describe('POST /v1/channels/beta/connect/page/code and /password', () => {
  it('hands the code, then the password, to the relay as login steps and answers like the verify routes', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign, token } = await codeStarted(t, relay)
    const first = pageStep(token, 'code', { code: ' 24680 ' })
    const codeFrame = await answerLogin(relay, assign, { status: 'password_required', hint: 'pet' })
    expect(codeFrame.step).toEqual({ kind: 'code', code: '24680' })
    const r1 = await first
    expect(r1.status).toBe(200)
    expect(r1.headers.get('cache-control')).toBe('no-store')
    expect(await body(r1)).toEqual({
      success: true,
      phone_number: phone,
      status: 'password_required',
      telegram_user_id: null,
      username: null,
      password_hint: 'pet',
    })
    const second = pageStep(token, 'password', { password: 'correct horse' })
    const passwordFrame = await answerLogin(relay, assign, { status: 'connected', userId: '7100003', username: 'owner' })
    expect(passwordFrame.step).toEqual({ kind: 'password', password: 'correct horse' })
    const r2 = await body(await second)
    expect(r2).toEqual({ success: true, phone_number: phone, status: 'connected', telegram_user_id: '7100003', username: 'owner' })
    expect(JSON.stringify(r2)).not.toContain('correct horse')
  })

  it('answers every refusal with the same status and body as the REST verify route', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, assign, token } = await codeStarted(t, relay)
    const refusals = [
      ['code_invalid', 'code'],
      ['code_expired', 'code'],
      ['password_invalid', 'password'],
      ['too_many_attempts', 'code'],
    ] as const
    for (const [error, step] of refusals) {
      const json = step === 'code' ? { code: '99999' } : { password: 'nope' }
      const outcome = { status: 'refused' as const, error, message: 'because', retryAfterS: error === 'too_many_attempts' ? 30 : null }
      const viaPage = pageStep(token, step, json)
      await answerLogin(relay, assign, outcome)
      const page = await viaPage
      const viaRest = restStep(t, phone, step, json)
      await answerLogin(relay, assign, outcome)
      const rest = await viaRest
      expect(page.status, error).toBe(rest.status)
      expect(page.headers.get('Retry-After'), error).toBe(rest.headers.get('Retry-After'))
      const pageBody = await body(page)
      expect(pageBody, error).toEqual(await body(rest))
      expect(pageBody, error).toMatchObject({ success: false, error: `${error}: because` })
      expect(JSON.stringify(pageBody)).not.toContain(step === 'code' ? '99999' : 'nope')
    }
  })

  it('validates the body as the REST routes do, and answers 503 while no relay runs the login', async () => {
    const t = await newTenant()
    const phone = newPhone()
    const r = await body<ConnectAnswer>(await call('/v1/channels/beta/connect', { method: 'POST', key: t.key, json: { phone_number: phone } }))
    const token = new URL(r.connect_url!).searchParams.get('token')!
    expect((await pageStep(token, 'code', { code: '' })).status).toBe(400)
    expect((await pageStep(token, 'password', {})).status).toBe(400)
    const noRelay = await pageStep(token, 'code', { code: '12345' })
    expect(noRelay.status).toBe(503)
    expect(await body(noRelay)).toEqual(await body(await restStep(t, phone, 'code', { code: '12345' })))
  })

  it('shares one limit with the REST verify routes: 10 steps a minute per number, then 429 with Retry-After', async () => {
    const t = await newTenant()
    const phone = newPhone()
    const r = await body<ConnectAnswer>(await call('/v1/channels/beta/connect', { method: 'POST', key: t.key, json: { phone_number: phone } }))
    const token = new URL(r.connect_url!).searchParams.get('token')!
    const { limit, periodS } = RATE_LIMITS.RL_LOGIN_STEP
    // The binding's window is aligned to its clock: this one's starts with the test, so no rollover falls between steps.
    let now = Date.parse('2026-03-01T10:00:00Z')
    const limiter = fixedWindowLimiter(RATE_LIMITS.RL_LOGIN_STEP, () => now)
    const step = (path: string, json: unknown, key?: string) =>
      app.fetch(
        new Request(`${ORIGIN}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(key ? { Authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify(json),
        }),
        { ...env, RL_LOGIN_STEP: limiter },
        createExecutionContext()
      )
    const page = () => step(`${PAGE}/code${q(token)}`, { code: '12345' })
    const rest = (kind: 'code' | 'password', json: unknown) => step(`/v1/channels/beta/connect/${encodeURIComponent(phone)}/${kind}`, json, t.key)
    // No relay runs the login, so each counted step answers 503 until the limit refuses it first.
    for (let i = 0; i < limit; i++) {
      now += 1000
      const res = i % 2 === 0 ? await page() : await rest('password', { password: 'x' })
      expect(res.status, `step ${i + 1}`).toBe(503)
    }
    for (const res of [await page(), await rest('code', { code: '12345' })]) {
      expect(res.status).toBe(429)
      expect(res.headers.get('Retry-After')).toBe(String(periodS))
      expect(await body(res)).toEqual({ success: false, error: expect.stringContaining('Too many login codes'), error_code: 429 })
    }
    // Retry-After is honest: a period later the number gets its steps again.
    now += periodS * 1000
    expect((await page()).status).toBe(503)
  })

  it('counts against RL_LOGIN_STEP (a binding that says over refuses the page before the relay hears of it)', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { token } = await codeStarted(t, relay)
    const over: RateLimit = { limit: async () => ({ success: false }) }
    const res = await app.fetch(
      new Request(`${ORIGIN}${PAGE}/code${q(token)}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"code":"12345"}' }),
      { ...env, RL_LOGIN_STEP: over },
      createExecutionContext()
    )
    expect(res.status).toBe(429)
    expect(relay.frames.some((f) => f.type === 'login')).toBe(false)
  })
})

describe('the /v1 key check around the page', () => {
  it('is skipped for exactly the page’s paths', async () => {
    const t = await newTenant()
    const relay = await betaRelay(t)
    const { phone, token } = await codeStarted(t, relay)
    expect((await state(token)).status).toBe(200)
    expect((await call(`${PAGE}/other${q(token)}`)).status).toBe(401)
    expect((await call(`${PAGE}/state${q(token)}`, { method: 'POST' })).status).toBe(401)
    expect((await call(`/v1/channels/beta/connect/${encodeURIComponent(phone)}/status${q(token)}`)).status).toBe(401)
    expect((await call(`/v1/channels/beta/connect/${encodeURIComponent(phone)}/status`, { key: t.key })).status).toBe(200)
  })
})

describe('the page in the OpenAPI document', () => {
  it('lists the page, its state and its two submissions under the channel, without key security', async () => {
    type Op = { operationId: string; security?: unknown[]; parameters?: { name: string; in: string }[] }
    const doc = await body<{ paths: Record<string, Record<string, Op>> }>(await call('/v1/openapi.json'))
    const ops = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/channels/beta/connect/page'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ id: `${method.toUpperCase()} ${path} ${op.operationId}`, op })))
    expect(ops.map((o) => o.id).sort()).toEqual(
      [
        'GET /channels/beta/connect/page get_beta_connect_page',
        'GET /channels/beta/connect/page/state get_beta_connect_page_state',
        'POST /channels/beta/connect/page/code submit_beta_connect_page_code',
        'POST /channels/beta/connect/page/password submit_beta_connect_page_password',
      ].sort()
    )
    for (const { op } of ops) {
      expect(op.security).toEqual([])
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'token', in: 'query' }))
    }
  })
})
