/** /v1/messages: validation with field-specific error codes, account and recipient resolution, list paging, get one. */
import { describe, expect, it } from 'vitest'
import { encodeCursor } from '../../../worker/lib/cursor'
import { contactIdFor } from '../../../worker/lib/ids'
import { body, call, connectCustom, getMessageVia, newTenant, pushInbound, send, type TestTenant, type WireMessageBody } from '../helpers'
import { and, eq } from 'drizzle-orm'
import { accounts } from '../../../schema/d1'
import { addAccount, contactRow, db, ingestVia, setContactFlags, untilOpenWaits } from '../state'

type ListBody = { messages: WireMessageBody[]; next_cursor: string | null }

async function customTenant() {
  const t = await newTenant()
  await connectCustom(t)
  await pushInbound(t, { body: 'hello', fromId: 'friend' })
  return t
}

async function list(t: TestTenant, query = '') {
  const res = await call(`/v1/messages${query ? `?${query}` : ''}`, { key: t.key })
  return { status: res.status, body: await body<ListBody & { error_code?: string; error?: string }>(res) }
}

const ok = { to: { external_id: 'friend' }, text: 'hi' }

describe('POST /v1/messages', () => {
  describe('success', () => {
    it('answers 202 with exactly {message_id, status: queued}', async () => {
      const t = await customTenant()
      const r = await send(t, ok)
      expect(r.status).toBe(202)
      expect(r.body).toEqual({ message_id: expect.stringMatching(/^msg_[0-9A-Za-z]{22}$/), status: 'queued' })
      const m = await getMessageVia(t, String(r.body.message_id))
      expect(m.body).toMatchObject({ direction: 'outbound', text: 'hi', account_id: 'custom', contact: { external_id: 'friend' } })
    })

    it('accepts a text of exactly 4096 characters, counting emoji as one character each', async () => {
      const t = await customTenant()
      expect((await send(t, { ...ok, text: 'a'.repeat(4096) })).status).toBe(202)
      await pushInbound(t, { body: 'again', fromId: 'friend' })
      expect((await send(t, { ...ok, text: '😀'.repeat(4096) })).status).toBe(202)
    })

    it('accepts one https media_url and reports it with a guessed content type', async () => {
      const t = await customTenant()
      const r = await send(t, { ...ok, media_url: 'https://cdn.example.com/photo.PNG' })
      expect(r.status).toBe(202)
      expect((await getMessageVia(t, String(r.body.message_id))).body.media).toEqual({ url: 'https://cdn.example.com/photo.PNG', content_type: 'image/png' })
    })

    it('creates the contact for a new phone number on a phone channel', async () => {
      const t = await newTenant()
      await addAccount(t.tenantId, { id: '+15550005555', channel: 'sms' })
      const r = await send(t, { to: { phone: '+447700900123' }, text: 'Your table is ready' })
      expect(r.status).toBe(202)
      const m = await getMessageVia(t, String(r.body.message_id))
      expect(m.body.contact).toMatchObject({ phone: '+447700900123', external_id: null })
      expect(await contactRow(t.tenantId, m.body.contact.id)).toMatchObject({ channel: 'sms', phone: '+447700900123', firstInboundAt: null })
    })

    it('addresses a contact by contact_id', async () => {
      const t = await customTenant()
      const contactId = await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: 'friend' })
      expect((await send(t, { to: { contact_id: contactId }, text: 'by id' })).status).toBe(202)
    })
  })

  describe('invalid input', () => {
    const cases: [string, unknown, string][] = [
      ['no text', { to: { external_id: 'friend' } }, 'invalid_text'],
      ['an empty text', { ...ok, text: '' }, 'invalid_text'],
      ['a text of 4097 characters', { ...ok, text: 'a'.repeat(4097) }, 'invalid_text'],
      ['a text that is not a string', { ...ok, text: 42 }, 'invalid_text'],
      ['an http media_url', { ...ok, media_url: 'http://cdn.example.com/a.jpg' }, 'invalid_media_url'],
      ['a media_url that is not a URL', { ...ok, media_url: 'photo.jpg' }, 'invalid_media_url'],
      ['a media_url on a private address', { ...ok, media_url: 'https://10.0.0.5/a.jpg' }, 'invalid_media_url'],
      ['a media_url on the metadata address', { ...ok, media_url: 'https://169.254.169.254/latest/meta-data/' }, 'invalid_media_url'],
      ['a media_url on an internal name', { ...ok, media_url: 'https://files.internal/a.jpg' }, 'invalid_media_url'],
      ["a media_url on the service's own host", { ...ok, media_url: 'https://gateway.test/v1/usage' }, 'invalid_media_url'],
      ['two media URLs', { ...ok, media_url: ['https://a.example.com/1.jpg', 'https://a.example.com/2.jpg'] }, 'invalid_media_url'],
      ['no to', { text: 'hi' }, 'invalid_recipient'],
      ['an empty to', { to: {}, text: 'hi' }, 'invalid_recipient'],
      ['two addresses', { to: { external_id: 'friend', phone: '+15551234567' }, text: 'hi' }, 'invalid_recipient'],
      ['a phone that is not E.164', { to: { phone: '0044 7700 900123' }, text: 'hi' }, 'invalid_recipient'],
      ['a phone without its plus', { to: { phone: '15551234567' }, text: 'hi' }, 'invalid_recipient'],
      ['an empty account_id', { ...ok, account_id: '' }, 'invalid_account_id'],
    ]
    for (const [what, json, code] of cases) {
      it(`refuses ${what} with 400 ${code}`, async () => {
        const t = await customTenant()
        const r = await send(t, json)
        expect(r.status).toBe(400)
        expect(r.body).toEqual({ error_code: code, error: expect.any(String) })
      })
    }

    it('refuses an empty or doubled to with invalid_recipient even before any account is connected', async () => {
      const t = await newTenant()
      for (const to of [{}, { external_id: 'a', phone: '+15551234567' }]) {
        const r = await send(t, { to, text: 'hi' })
        expect(r.status).toBe(400)
        expect(r.body).toEqual({ error_code: 'invalid_recipient', error: expect.stringContaining('one of') })
      }
    })

    it('takes to.contact_id with that contact’s own address, and refuses it with another person’s', async () => {
      const t = await customTenant()
      const pushed = await pushInbound(t, { body: 'hi again', fromId: 'pat' })
      const contactId = String(pushed.body.contact_id)
      const same = await send(t, { to: { contact_id: contactId, external_id: 'pat' }, text: 'hello Pat' })
      expect(same.status).toBe(202)
      // An address the contact does not have cannot be checked: refused, not ignored (a custom contact has no phone).
      const unknown = await send(t, { to: { contact_id: contactId, phone: '+15551234567' }, text: 'again' })
      expect(unknown.status).toBe(400)
      expect(unknown.body).toEqual({ error_code: 'invalid_recipient', error: expect.stringContaining('to.phone') })
      const other = await send(t, { to: { contact_id: contactId, external_id: 'sam' }, text: 'who?' })
      expect(other.status).toBe(400)
      expect(other.body).toEqual({ error_code: 'invalid_recipient', error: expect.stringContaining('to.external_id') })
    })

    it('refuses a body that is not JSON with 400 invalid_request', async () => {
      const t = await customTenant()
      const res = await call('/v1/messages', { method: 'POST', key: t.key, headers: { 'Content-Type': 'application/json' }, body: '{"to":' })
      expect(res.status).toBe(400)
      expect(await body(res)).toEqual({ error_code: 'invalid_request', error: expect.any(String) })
    })

    it('refuses an address kind the account’s channel does not use, with invalid_recipient', async () => {
      const t = await customTenant()
      expect((await send(t, { to: { phone: '+15551234567' }, text: 'hi' })).body.error_code).toBe('invalid_recipient')
      expect((await send(t, { to: { social_id: 'psid-1' }, text: 'hi' })).body.error_code).toBe('invalid_recipient')
      const s = await newTenant()
      await addAccount(s.tenantId, { id: '+15550006666', channel: 'sms' })
      expect((await send(s, { to: { external_id: 'friend' }, text: 'hi' })).body.error_code).toBe('invalid_recipient')
    })

    it('stores nothing for an invalid request', async () => {
      const t = await customTenant()
      await send(t, { ...ok, text: '' })
      expect((await list(t, 'direction=outbound')).body.messages).toEqual([])
    })
  })

  describe('account resolution', () => {
    it('answers 409 no_connected_account when nothing is connected', async () => {
      const t = await newTenant()
      const r = await send(t, ok)
      expect(r.status).toBe(409)
      expect(r.body).toEqual({ error_code: 'no_connected_account', error: expect.any(String) })
    })

    it('answers 409 no_connected_account when the only account is not connected', async () => {
      const t = await newTenant()
      await addAccount(t.tenantId, { id: '+15550007777', channel: 'alpha_web', status: 'connecting' })
      expect((await send(t, { to: { phone: '+15551234567' }, text: 'hi' })).body.error_code).toBe('no_connected_account')
    })

    it('answers 400 ambiguous_account when several are connected and no account_id is given', async () => {
      const t = await customTenant()
      await addAccount(t.tenantId, { id: '+15550008888', channel: 'sms' })
      const r = await send(t, ok)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error_code: 'ambiguous_account', error: expect.stringContaining('+15550008888') })
      expect((await send(t, { ...ok, account_id: 'custom' })).status).toBe(202)
    })

    it('uses the one connected account when others are not connected', async () => {
      const t = await customTenant()
      await addAccount(t.tenantId, { id: '+15550009999', channel: 'alpha_web', status: 'disconnected' })
      expect((await send(t, ok)).status).toBe(202)
    })

    it('answers 404 account_not_found for an unknown account_id', async () => {
      const t = await customTenant()
      const r = await send(t, { ...ok, account_id: '+15550000000' })
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error_code: 'account_not_found', error: expect.any(String) })
    })

    it("answers 404 account_not_found for another tenant's account", async () => {
      const a = await newTenant()
      await addAccount(a.tenantId, { id: '+15550001234', channel: 'sms' })
      const b = await customTenant()
      expect((await send(b, { account_id: '+15550001234', to: { phone: '+15551234567' }, text: 'hi' })).body.error_code).toBe('account_not_found')
    })

    it('answers 403 account_restricted when account_id names an account the channel restricted', async () => {
      const t = await customTenant()
      await addAccount(t.tenantId, { id: '+15550003456', channel: 'alpha_web', status: 'restricted' })
      const r = await send(t, { account_id: '+15550003456', to: { phone: '+15551234567' }, text: 'hi' })
      expect(r.status).toBe(403)
      expect(r.body).toEqual({ error_code: 'account_restricted', error: expect.any(String) })
    })

    /** An account someone (`from`) wrote to, then restricted by its channel for `reason`. */
    async function restrictedAfterInbound(t: TestTenant, a: { id: string; channel: 'alpha_web' | 'beta'; reason: string; from: string }) {
      const ref = await addAccount(t.tenantId, { id: a.id, channel: a.channel, status: 'connected' })
      await ingestVia(ref, { phone: a.from }, 'hello')
      await db
        .update(accounts)
        .set({ status: 'restricted', statusReason: a.reason })
        .where(and(eq(accounts.tenantId, t.tenantId), eq(accounts.id, ref.accountId)))
      return ref
    }

    it('lets a reply out of an alpha account restricted by a 463 (blocked_by_alpha) and refuses a new chat with account_restricted', async () => {
      const t = await customTenant()
      const ref = await restrictedAfterInbound(t, { id: '+15550003457', channel: 'alpha_web', reason: 'blocked_by_alpha', from: '+15551230457' })
      const reply = await send(t, { account_id: ref.accountId, to: { phone: '+15551230457' }, text: 'a reply' })
      expect(reply.status).toBe(202)
      const fresh = await send(t, { account_id: ref.accountId, to: { phone: '+15551230458' }, text: 'a new chat' })
      expect(fresh.status).toBe(403)
      expect(fresh.body).toEqual({ error_code: 'account_restricted', error: expect.stringContaining('may not start new chats') })
    })

    it('lets a reply out of a beta account restricted by PEER_FLOOD (stranger_flag), but not out of a banned one (blocked_by_beta)', async () => {
      const t = await customTenant()
      const ref = await restrictedAfterInbound(t, { id: '+15550003458', channel: 'beta', reason: 'stranger_flag', from: '+15551230459' })
      const reply = await send(t, { account_id: ref.accountId, to: { phone: '+15551230459' }, text: 'a reply' })
      expect(reply.status).toBe(202)
      const banned = await restrictedAfterInbound(t, { id: '+15550003459', channel: 'beta', reason: 'blocked_by_beta', from: '+15551230460' })
      expect((await send(t, { account_id: banned.accountId, to: { phone: '+15551230460' }, text: 'x' })).body.error_code).toBe('account_restricted')
    })

    it('answers 409 account_not_connected when account_id names an account that is not connected', async () => {
      const t = await customTenant()
      await addAccount(t.tenantId, { id: '+15550002345', channel: 'alpha_web', status: 'disconnected' })
      const r = await send(t, { account_id: '+15550002345', to: { phone: '+15551234567' }, text: 'hi' })
      expect(r.status).toBe(409)
      expect(r.body.error_code).toBe('account_not_connected')
    })
  })

  describe('recipient resolution', () => {
    it('answers 404 contact_not_found for an unknown contact_id', async () => {
      const t = await customTenant()
      const r = await send(t, { to: { contact_id: 'con_doesnotexist' }, text: 'hi' })
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error_code: 'contact_not_found', error: expect.any(String) })
    })

    it("answers 404 contact_not_found for another tenant's contact", async () => {
      const a = await customTenant()
      const b = await customTenant()
      const theirs = await contactIdFor(a.tenantId, 'custom', { kind: 'external', value: 'friend' })
      expect((await send(b, { to: { contact_id: theirs }, text: 'hi' })).body.error_code).toBe('contact_not_found')
    })

    it('answers 422 contact_channel_mismatch for a contact of another channel', async () => {
      const t = await customTenant()
      const sms = await addAccount(t.tenantId, { id: '+15550003456', channel: 'sms' })
      const r = await ingestVia(sms, { phone: '+15551239999' }, 'hi by sms')
      const res = await send(t, { account_id: 'custom', to: { contact_id: r.contactId }, text: 'hi' })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ error_code: 'contact_channel_mismatch', error: expect.any(String) })
    })

    it('answers 422 contact_channel_mismatch for a contact of another account on the same channel', async () => {
      const t = await newTenant()
      const one = await addAccount(t.tenantId, { id: '+15550004567', channel: 'sms' })
      await addAccount(t.tenantId, { id: '+15550004568', channel: 'sms' })
      const r = await ingestVia(one, { phone: '+15551238888' }, 'hi')
      expect((await send(t, { account_id: '+15550004568', to: { contact_id: r.contactId }, text: 'hi' })).body.error_code).toBe('contact_channel_mismatch')
    })

    it('answers 422 contact_private, contact_do_not_disturb and contact_opted_out from the contact flags', async () => {
      const t = await customTenant()
      const id = await contactIdFor(t.tenantId, 'custom', { kind: 'external', value: 'friend' })
      for (const [flags, code] of [
        [{ private: true }, 'contact_private'],
        [{ doNotDisturb: true }, 'contact_do_not_disturb'],
        [{ optedOut: true }, 'contact_opted_out'],
      ] as const) {
        const cleared = { private: false, doNotDisturb: false, optedOut: false }
        await setContactFlags(id, { ...cleared, ...flags })
        for (const to of [{ contact_id: id }, { external_id: 'friend' }]) {
          const r = await send(t, { to, text: 'hi' })
          expect(r.status).toBe(422)
          expect(r.body).toEqual({ error_code: code, error: expect.any(String) })
        }
      }
    })

    it('answers 422 beta_requires_existing_contact for a new number on beta', async () => {
      const t = await newTenant()
      await addAccount(t.tenantId, { id: '+15550005678', channel: 'beta' })
      const r = await send(t, { to: { phone: '+15551234567' }, text: 'hi' })
      expect(r.status).toBe(422)
      expect(r.body.error_code).toBe('beta_requires_existing_contact')
    })

    it('answers 409 needs_inbound_first for a page-inbox person who never wrote', async () => {
      const t = await newTenant()
      await addAccount(t.tenantId, { id: 'page-1', channel: 'social' })
      const r = await send(t, { to: { social_id: 'psid-42' }, text: 'hi' })
      expect(r.status).toBe(409)
      expect(r.body.error_code).toBe('needs_inbound_first')
    })
  })

  it('answers 401 in the messaging shape without a key', async () => {
    const res = await call('/v1/messages', { method: 'POST', json: ok })
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ error_code: 'unauthorized', error: expect.any(String) })
  })
})

describe('GET /v1/messages', () => {
  it('lists both directions newest first in the wire shape', async () => {
    const t = await customTenant()
    const sent = await send(t, ok)
    await pushInbound(t, { body: 'latest', fromId: 'friend' })
    const r = await list(t)
    expect(r.status).toBe(200)
    expect(r.body.messages.map((m) => m.text)).toEqual(['latest', 'hi', 'hello'])
    expect(r.body.next_cursor).toBeNull()
    const out = r.body.messages[1]!
    expect(out).toEqual({
      id: sent.body.message_id,
      account_id: 'custom',
      direction: 'outbound',
      text: 'hi',
      media: null,
      status: expect.stringMatching(/^(queued|sent)$/),
      error: null,
      timestamp: expect.stringMatching(/Z$/),
      contact: { id: expect.stringMatching(/^con_/), phone: null, name: null, external_id: 'friend', ai_paused: false },
    })
  })

  it('pages with before = next_cursor without gaps or repeats, and ends with next_cursor null', async () => {
    const t = await customTenant()
    for (let i = 1; i < 7; i++) await pushInbound(t, { body: `m${i}`, fromId: 'friend' })
    const all = (await list(t, 'limit=100')).body.messages.map((m) => m.id)
    expect(all).toHaveLength(7)
    const pages: string[][] = []
    let before: string | null = null
    do {
      const r = await list(t, `limit=3${before ? `&before=${before}` : ''}`)
      pages.push(r.body.messages.map((m) => m.id))
      before = r.body.next_cursor
    } while (before)
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1])
    expect(pages.flat()).toEqual(all)
  })

  it('gives next_cursor null when the last page is exactly full', async () => {
    const t = await customTenant()
    for (let i = 1; i < 6; i++) await pushInbound(t, { body: `m${i}`, fromId: 'friend' })
    const first = await list(t, 'limit=3')
    expect(first.body.next_cursor).not.toBeNull()
    const second = await list(t, `limit=3&before=${first.body.next_cursor}`)
    expect(second.body.messages).toHaveLength(3)
    expect(second.body.next_cursor).toBeNull()
  })

  it('keeps later pages stable while new messages arrive', async () => {
    const t = await customTenant()
    for (let i = 1; i < 5; i++) await pushInbound(t, { body: `m${i}`, fromId: 'friend' })
    const first = await list(t, 'limit=2')
    await pushInbound(t, { body: 'newer', fromId: 'friend' })
    const second = await list(t, `limit=2&before=${first.body.next_cursor}`)
    expect(second.body.messages.map((m) => m.text)).toEqual(['m2', 'm1'])
  })

  it('returns 50 by default', async () => {
    const t = await customTenant()
    for (let i = 0; i < 52; i++) await pushInbound(t, { body: `b${i}`, fromId: `f${i % 5}` })
    const r = await list(t)
    expect(r.body.messages).toHaveLength(50)
    expect(r.body.next_cursor).not.toBeNull()
  })

  it('filters by direction and by account_id, and pages within the filter', async () => {
    const t = await customTenant()
    const sms = await addAccount(t.tenantId, { id: '+15550006789', channel: 'sms' })
    await send(t, { ...ok, account_id: 'custom' })
    await ingestVia(sms, { phone: '+15551230001' }, 'sms in')
    await ingestVia(sms, { phone: '+15551230002' }, 'sms in 2')
    expect((await list(t, 'direction=outbound')).body.messages.map((m) => m.text)).toEqual(['hi'])
    expect((await list(t, 'direction=inbound')).body.messages.map((m) => m.text)).toEqual(['sms in 2', 'sms in', 'hello'])
    expect((await list(t, 'account_id=custom')).body.messages.map((m) => m.text)).toEqual(['hi', 'hello'])
    const page1 = await list(t, 'direction=inbound&limit=1')
    const page2 = await list(t, `direction=inbound&limit=1&before=${page1.body.next_cursor}`)
    expect(page2.body.messages.map((m) => m.text)).toEqual(['sms in'])
  })

  for (const [param, code] of [
    ['limit=0', 'invalid_limit'],
    ['limit=101', 'invalid_limit'],
    ['limit=-1', 'invalid_limit'],
    ['limit=1.5', 'invalid_limit'],
    ['limit=ten', 'invalid_limit'],
    // Decimal digits only: z.coerce read these as 0, 16 and 10.
    ['limit=', 'invalid_limit'],
    ['limit=0x10', 'invalid_limit'],
    ['limit=1e1', 'invalid_limit'],
    ['direction=sideways', 'invalid_direction'],
    ['before=not-a-cursor', 'invalid_cursor'],
    [`before=${encodeCursor('wait', 5)}`, 'invalid_cursor'],
    // A placement the tenant never had (made up, not a cache behind a move): 400, not a 503 no retry could end.
    [`before=${encodeCursor('list', 5, 3)}`, 'invalid_cursor'],
    ['account_id=', 'invalid_account_id'],
  ] as const) {
    it(`answers 400 ${code} for ${param}`, async () => {
      const t = await customTenant()
      const r = await list(t, param)
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error_code: code, error: expect.any(String) })
    })
  }

  it('accepts limit 1 and 100', async () => {
    const t = await customTenant()
    expect((await list(t, 'limit=1')).status).toBe(200)
    expect((await list(t, 'limit=100')).status).toBe(200)
  })

  it("never lists another tenant's messages", async () => {
    const a = await customTenant()
    const b = await newTenant()
    expect((await list(b)).body.messages).toEqual([])
    expect((await list(b, `account_id=custom`)).body.messages).toEqual([])
    expect((await list(a)).body.messages).toHaveLength(1)
  })

  it('answers 401 without a key', async () => {
    expect((await call('/v1/messages')).status).toBe(401)
  })
})

describe('GET /v1/messages/{id}', () => {
  it('answers 404 message_not_found for an unknown id', async () => {
    const t = await customTenant()
    const r = await getMessageVia(t, 'msg_nope')
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error_code: 'message_not_found', error: expect.any(String) })
  })

  it("answers 404 for another tenant's message", async () => {
    const a = await customTenant()
    const b = await newTenant()
    const id = (await list(a)).body.messages[0]!.id
    expect((await getMessageVia(a, id)).status).toBe(200)
    const r = await getMessageVia(b, id)
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error_code: 'message_not_found', error: expect.any(String) })
  })

  it('answers 401 without a key', async () => {
    const res = await call('/v1/messages/msg_x')
    expect(res.status).toBe(401)
    expect(await body(res)).toEqual({ error_code: 'unauthorized', error: expect.any(String) })
  })
})

describe('GET /v1/messages/wait parameters', () => {
  for (const [param, code] of [
    ['timeout_s=56', 'invalid_timeout'],
    ['timeout_s=-1', 'invalid_timeout'],
    ['timeout_s=2.5', 'invalid_timeout'],
    ['timeout_s=soon', 'invalid_timeout'],
    // An empty value is not 0 (a wait that answers at once, polled in a loop).
    ['timeout_s=', 'invalid_timeout'],
    ['timeout_s=0x10', 'invalid_timeout'],
    ['cursor=garbage', 'invalid_cursor'],
    [`cursor=${encodeCursor('list', 5)}`, 'invalid_cursor'],
    [`cursor=${encodeCursor('wait', 5, 3)}`, 'invalid_cursor'],
    ['account_id=', 'invalid_account_id'],
  ] as const) {
    it(`answers 400 ${code} for ${param}`, async () => {
      const t = await customTenant()
      const res = await call(`/v1/messages/wait?${param}`, { key: t.key })
      expect(res.status).toBe(400)
      expect(await body(res)).toEqual({ error_code: code, error: expect.any(String) })
    })
  }

  it('accepts timeout_s 55', async () => {
    const t = await customTenant()
    const pending = call('/v1/messages/wait?timeout_s=55', { key: t.key })
    await untilOpenWaits(t.tenantId, 'custom', 1)
    await pushInbound(t, { body: 'quick', fromId: 'friend' })
    const res = await pending
    expect(res.status).toBe(200)
  })

  it("answers 404 account_not_found for an unknown or another tenant's account", async () => {
    const a = await customTenant()
    const b = await newTenant()
    for (const [t, id] of [
      [a, 'nope'],
      [b, 'custom'],
    ] as const) {
      const res = await call(`/v1/messages/wait?timeout_s=0&account_id=${id}`, { key: t.key })
      expect(res.status).toBe(404)
      expect(await body(res)).toEqual({ error_code: 'account_not_found', error: expect.any(String) })
    }
  })

  it('answers 401 without a key', async () => {
    expect((await call('/v1/messages/wait?timeout_s=0')).status).toBe(401)
  })
})
