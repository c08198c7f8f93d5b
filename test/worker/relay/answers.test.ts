/**
 * What the hub takes from a relay that does not hold a session: an answer to a probe or login step only on the link
 * it was asked on, and late data (inbound, media uploads under an earlier fence) only from a relay whose scope covers
 * the tenant, so the service's relays cannot write into the sessions of a tenant that runs its own.
 */
import { describe, expect, it } from 'vitest'
import { body, call, newTenant, ORIGIN, type TestTenant } from '../helpers'
import { exports } from 'cloudflare:workers'
import { closeRelaysAfterEach, FakeRelay, issueRelay, uniquePhone } from '../relay-helpers'

const relays = closeRelaysAfterEach()

async function open(token: string) {
  const r = await FakeRelay.open(token)
  relays.push(r)
  return r
}

async function linking(t: TestTenant, relay: FakeRelay, phone = uniquePhone('1778')) {
  expect((await call('/v1/channels/alpha-web/connections', { method: 'POST', key: t.key, json: { phone_number: phone } })).status).toBe(200)
  return { phone, assign: await relay.next('assign', (a) => a.account.accountId === phone) }
}

const inbound = (relay: FakeRelay, sid: string, fence: number, text: string) =>
  relay.request({
    type: 'inbound',
    id: relay.id(),
    sid,
    fence,
    message: { upstreamId: `U-${text}`, from: { id: 'p', phone: '+447700900777', lid: null, name: null }, text, media: null, sentAt: Date.now() },
  })

type Status = { live: boolean; status: string; qr_expires_at: string | null; has_qr: boolean }

describe('probe answers', () => {
  it('count only from the link the probe was sent on: another relay’s answer with the same id is dropped', async () => {
    const t = await newTenant()
    const holder = await open((await issueRelay(t.tenantId)).token)
    const impostor = await open((await issueRelay()).token)
    const { phone, assign } = await linking(t, holder)
    await holder.state(assign, { state: 'connected', identifier: phone, upstreamUserId: null })
    const path = `/v1/channels/alpha-web/connections/${encodeURIComponent(phone)}/status`
    const forged = call(path, { key: t.key })
    const probe = await holder.next('probe', (p) => p.sid === assign.sid)
    impostor.send({ type: 'probe_result', id: probe.id, sid: assign.sid, state: { state: 'qr_pending', qr: 'forged-qr', expiresAt: Date.now() + 60_000 } })
    // Only the holder's silence counts: the status falls back to the last report after the probe timeout.
    expect(await body<Status>(await forged)).toMatchObject({ live: false, status: 'connected', has_qr: false })

    const real = call(path, { key: t.key })
    const second = await holder.next('probe', (p) => p.sid === assign.sid)
    holder.send({ type: 'probe_result', id: second.id, sid: assign.sid, state: { state: 'connected', identifier: phone, upstreamUserId: null } })
    expect(await body<Status>(await real)).toMatchObject({ live: true, status: 'connected' })
  })
})

describe('late data from a relay that does not hold the session', () => {
  it('is refused from a service relay for a tenant with relays of its own', async () => {
    const own = await newTenant()
    const scoped = await open((await issueRelay(own.tenantId)).token)
    const { assign } = await linking(own, scoped)
    const service = await open((await issueRelay()).token)
    expect(await inbound(service, assign.sid, assign.fence, 'from the service relay')).toMatchObject({ type: 'reject', reason: 'stale_fence' })
    expect((await body<{ messages: unknown[] }>(await call('/v1/messages', { key: own.key }))).messages).toEqual([])
  })

  it('is taken from another service relay for a tenant without relays of its own (what a failover leaves behind)', async () => {
    const shared = await newTenant()
    const [a, b] = [await open((await issueRelay()).token), await open((await issueRelay()).token)]
    const phone = uniquePhone('1779')
    expect((await call('/v1/channels/alpha-web/connections', { method: 'POST', key: shared.key, json: { phone_number: phone } })).status).toBe(200)
    const match = (f: { account: { accountId: string } }) => f.account.accountId === phone
    const { relay: holder, assign } = await Promise.any([a, b].map((relay) => relay.next('assign', match).then((frame) => ({ relay, assign: frame }))))
    const notHolder = holder === a ? b : a
    expect(await inbound(notHolder, assign.sid, assign.fence, 'seen before the move')).toMatchObject({ type: 'ack' })
  })

  it('refuses a media upload under an earlier fence from a service relay for a tenant with its own, and takes its own relay’s', async () => {
    const own = await newTenant()
    const scoped = await open((await issueRelay(own.tenantId)).token)
    const service = await issueRelay()
    const { phone, assign: first } = await linking(own, scoped)
    // Linking again restarts the session under a higher fence: the first fence is now an earlier holder's.
    const { assign: second } = await linking(own, scoped, phone)
    expect(second.fence).toBeGreaterThan(first.fence)
    const upload = (token: string) =>
      exports.default.fetch(
        new Request(`${ORIGIN}/relay/media/${first.sid}/up-${token.slice(-6)}`, {
          method: 'PUT',
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'image/png',
            'x-media-fence': String(first.fence),
            'x-media-kind': 'image',
            'x-media-size': '3',
          },
          body: new Uint8Array([1, 2, 3]),
        })
      )
    expect((await upload(service.token)).status).toBe(409)
    const mine = await upload((await issueRelay(own.tenantId)).token)
    expect(mine.status, await mine.clone().text()).toBe(200)
  })
})
