/** /connect/alpha-web: the hosted connect page, its state endpoint and its restart, reached with a signed token only. */
import { env } from 'cloudflare:workers'
import { describe, expect, it, vi } from 'vitest'
import { signToken } from '../../../../worker/lib/signed-token'
import { alteredToken, body, call, newTenant, type TestTenant } from '../../helpers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../../relay-helpers'

const relays = closeRelaysAfterEach()

const newPhone = () => uniquePhone('1888')

async function started(t: TestTenant, json: Record<string, unknown> = {}) {
  const { token } = await issueRelay(t.tenantId)
  const relay = await FakeRelay.open(token)
  relays.push(relay)
  const phone = newPhone()
  const r = await body<{ connect_url: string }>(
    await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone, ...json } })
  )
  const assign = await relay.next('assign', (a) => a.account.accountId === phone)
  const url = new URL(r.connect_url)
  return { relay, assign, phone, path: url.pathname + url.search, token: url.searchParams.get('token')! }
}

const state = (token: string) => call(`/connect/alpha-web/state?token=${encodeURIComponent(token)}`)

describe('GET /connect/alpha-web', () => {
  it('serves the page without an API key, with a strict CSP and no caching', async () => {
    const t = await newTenant()
    const { path, phone } = await started(t)
    const res = await call(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'nonce-[0-9A-Za-z]+'/)
    const html = await res.text()
    expect(html).toContain('Link your alpha number')
    expect(html).toContain('name="viewport"')
    expect(html).not.toContain(phone)
    expect(html).toContain(phone.slice(-3))
  })

  it('refuses a tampered token with 403 and an expired one with 410', async () => {
    const t = await newTenant()
    const { token } = await started(t)
    expect((await call(`/connect/alpha-web?token=${alteredToken(token)}`)).status).toBe(403)
    expect((await call('/connect/alpha-web')).status).toBe(403)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11 * 60_000)
    const res = await call(`/connect/alpha-web?token=${encodeURIComponent(token)}`)
    expect(res.status).toBe(410)
    expect(await res.text()).toContain('expired')
  })

  it('refuses a token signed for another purpose', async () => {
    const t = await newTenant()
    const forged = await signToken(env.ENCRYPTION_KEY, 'something-else', { tenant: t.tenantId, account: '+15550000000' }, Date.now() + 60_000)
    expect((await state(forged)).status).toBe(403)
  })
})

describe('GET /connect/alpha-web/state', () => {
  it('follows the link: the QR as a PNG, then connected', async () => {
    const t = await newTenant()
    const { relay, assign, token } = await started(t)
    await relay.state(assign, { state: 'qr_pending', qr: '2@ref,abc,def', expiresAt: Date.now() + 30_000 })
    const s1 = await body<Record<string, unknown>>(await state(token))
    expect(s1).toMatchObject({ status: 'qr_pending', qr_data_url: expect.stringMatching(/^data:image\/png;base64,/), page_expired: false, can_restart: false })
    expect(s1.qr_expires_at).toBeGreaterThan(Date.now())
    await relay.state(assign, { state: 'connected', identifier: '+1', upstreamUserId: null })
    expect(await body(await state(token))).toMatchObject({ status: 'connected', qr_data_url: null })
  })

  it('shows the pairing code instead of a QR code with link_method pairing_code', async () => {
    const t = await newTenant()
    const { relay, assign, token } = await started(t, { link_method: 'pairing_code' })
    await relay.state(assign, { state: 'pairing_code', code: 'ABCD2345', expiresAt: Date.now() + 60_000 })
    expect(await body(await state(token))).toMatchObject({ status: 'qr_pending', pairing_code: 'ABCD2345', qr_data_url: null })
  })
})

describe('POST /connect/alpha-web/restart', () => {
  it('starts a new link after the code lapsed, and does nothing while one is pending', async () => {
    const t = await newTenant()
    const { relay, assign, token } = await started(t)
    const restart = () => call(`/connect/alpha-web/restart?token=${encodeURIComponent(token)}`, { method: 'POST' })
    await restart()
    await new Promise((r) => setTimeout(r, 50))
    expect(relay.frames.some((f) => f.type === 'assign')).toBe(false)

    await relay.state(assign, { state: 'disconnected', problem: 'link_expired', message: 'The code was not used in time.' })
    expect(await body(await state(token))).toMatchObject({ status: 'disconnected', reason: 'link_expired', can_restart: true })
    await restart()
    const again = await relay.next('assign', (a) => a.sid === assign.sid)
    expect(again.fence).toBeGreaterThan(assign.fence)
  })

  it('does not restart a link the phone refused with a passkey demand', async () => {
    const t = await newTenant()
    const { relay, assign, token } = await started(t)
    await relay.state(assign, { state: 'disconnected', problem: 'passkey_required', message: 'passkey' })
    const r = await body(await call(`/connect/alpha-web/restart?token=${encodeURIComponent(token)}`, { method: 'POST' }))
    expect(r).toMatchObject({ reason: 'passkey_required', can_restart: false })
  })
})
