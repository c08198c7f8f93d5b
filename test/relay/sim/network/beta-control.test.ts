/** The beta control API over real HTTP, with the real GramJS client on the fake data centre as the app's session. */
import bigInt from 'big-integer'
import { Api, errors, type TelegramClient } from 'telegram'
import { computeCheck } from 'telegram/Password'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SIM_BETA_CREDS } from '../../../../relay/sim/network/beta-network'
import { startSimNetwork, type SimServer } from '../../../../relay/sim/network/server'
import { simControl } from '../sim-control'
import { gramClients, type GramClient } from '../../../fixtures/gram-client'

let sim: SimServer
const gram = gramClients(() => sim.dc)
beforeEach(async () => {
  sim = await startSimNetwork({ betaTiming: { codeMs: 60_000, qrMs: 30_000 } })
})
afterEach(async () => {
  await gram.destroyAll()
  await sim.close()
})

const PHONE = '+15557780001'
const P = encodeURIComponent(PHONE)
const FRIEND = '+15557780002'

const control = (method: string, path: string, body?: unknown) => simControl(sim, method, path, body)

/** A connected client on a session minted through the control API, as the relay's sim driver gets one. */
async function client(phone = PHONE): Promise<GramClient> {
  const minted = await control('POST', '/beta/dc/sessions', { phone })
  const cl = await gram.open(String(minted.json.session))
  expect(await cl.c.connect()).toBe(true)
  return cl
}

const { apiId, apiHash } = SIM_BETA_CREDS

async function codeLogin(c: TelegramClient, phone = PHONE): Promise<Api.auth.Authorization> {
  const sent = await c.invoke(new Api.auth.SendCode({ phoneNumber: phone.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
  if (!(sent instanceof Api.auth.SentCode)) throw new Error('no code sent')
  const { json } = await control('GET', `/beta/${encodeURIComponent(phone)}/code`)
  const auth = await c.invoke(new Api.auth.SignIn({ phoneNumber: phone.slice(1), phoneCodeHash: sent.phoneCodeHash, phoneCode: String(json.code) }))
  if (!(auth instanceof Api.auth.Authorization)) throw new Error('not authorized')
  return auth
}

async function rpcOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (err) {
    if (err instanceof errors.FloodWaitError) return `FLOOD_WAIT_${err.seconds}`
    if (err instanceof errors.RPCError) return err.errorMessage
    throw err
  }
  throw new Error('expected an RPC error')
}

describe('beta control API', () => {
  it('describes any number as a registered account with no password, and 404s a code before any login', async () => {
    const state = await control('GET', `/beta/${P}`)
    expect(state).toEqual({
      status: 200,
      json: expect.objectContaining({
        phone: PHONE,
        registered: true,
        banned: false,
        has_password: false,
        logged_in_sessions: 0,
        contacts: 0,
        pending_login: null,
        flood_seconds: 0,
        stranger: false,
      }),
    })
    expect((await control('GET', `/beta/15557780001/code`)).status).toBe(404)
    expect((await control('POST', `/beta/${P}/qr/accept`)).status).toBe(409)
    expect((await control('POST', `/beta/${P}/password`, { password: 5 })).status).toBe(400)
    expect((await control('GET', `/beta/${P}/nope`)).status).toBe(404)
  })

  it('shows the code the app received, logs in with it, and counts the session', async () => {
    const { c } = await client()
    const sent = await c.invoke(new Api.auth.SendCode({ phoneNumber: PHONE.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
    expect(sent).toBeInstanceOf(Api.auth.SentCode)
    expect((await control('GET', `/beta/${P}`)).json.pending_login).toBe('code')
    const code = await control('GET', `/beta/${P}/code`)
    expect(code.json).toEqual({ code: expect.stringMatching(/^\d{5}$/), expires_at: expect.any(Number) })
    const hash = sent instanceof Api.auth.SentCode ? sent.phoneCodeHash : ''
    expect(await rpcOf(c.invoke(new Api.auth.SignIn({ phoneNumber: PHONE.slice(1), phoneCodeHash: hash, phoneCode: '00000' })))).toBe('PHONE_CODE_INVALID')
    const auth = await c.invoke(new Api.auth.SignIn({ phoneNumber: PHONE.slice(1), phoneCodeHash: hash, phoneCode: String(code.json.code) }))
    expect(auth).toBeInstanceOf(Api.auth.Authorization)
    expect((await control('GET', `/beta/${P}`)).json).toMatchObject({ logged_in_sessions: 1, pending_login: null })
    // The session string resumes on a new connection.
    const again = await gram.open(String(c.session.save()))
    expect(await again.c.connect()).toBe(true)
    const me = await again.c.invoke(new Api.users.GetUsers({ id: [new Api.InputUserSelf()] }))
    expect(Array.isArray(me) && me[0] instanceof Api.User && me[0].phone).toBe(PHONE.slice(1))
  })

  it('checks a two-step password by SRP and answers PHONE_NUMBER_UNOCCUPIED for an unregistered number', async () => {
    expect((await control('POST', `/beta/${P}/password`, { password: 'hunter2', hint: 'cat' })).json.has_password).toBe(true)
    const { c } = await client()
    expect(await rpcOf(codeLogin(c))).toBe('SESSION_PASSWORD_NEEDED')
    const wrong = await c.invoke(new Api.account.GetPassword())
    if (!(wrong instanceof Api.account.Password)) throw new Error('no password')
    expect(wrong.hint).toBe('cat')
    expect(await rpcOf(c.invoke(new Api.auth.CheckPassword({ password: await computeCheck(wrong, 'nope') })))).toBe('PASSWORD_HASH_INVALID')
    const right = await c.invoke(new Api.account.GetPassword())
    if (!(right instanceof Api.account.Password)) throw new Error('no password')
    expect(await c.invoke(new Api.auth.CheckPassword({ password: await computeCheck(right, 'hunter2') }))).toBeInstanceOf(Api.auth.Authorization)

    const other = '+15557780009'
    await control('POST', `/beta/${encodeURIComponent(other)}/unregistered`)
    const { c: d } = await client(other)
    const sent = await d.invoke(new Api.auth.SendCode({ phoneNumber: other.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
    const code = (await control('GET', `/beta/${encodeURIComponent(other)}/code`)).json.code
    const hash = sent instanceof Api.auth.SentCode ? sent.phoneCodeHash : ''
    expect(await rpcOf(d.invoke(new Api.auth.SignIn({ phoneNumber: other.slice(1), phoneCodeHash: hash, phoneCode: String(code) })))).toBe(
      'PHONE_NUMBER_UNOCCUPIED'
    )
  })

  it('accepts the QR shown for the number and pushes UpdateLoginToken', async () => {
    const { c, updates } = await client()
    const token = await c.invoke(new Api.auth.ExportLoginToken({ apiId, apiHash, exceptIds: [] }))
    expect(token).toBeInstanceOf(Api.auth.LoginToken)
    expect((await control('GET', `/beta/${P}`)).json.pending_login).toBe('qr')
    expect(await control('POST', `/beta/${P}/qr/accept`)).toMatchObject({ status: 200 })
    await expect.poll(() => updates.some((u) => u instanceof Api.UpdateLoginToken)).toBe(true)
    const done = await c.invoke(new Api.auth.ExportLoginToken({ apiId, apiHash, exceptIds: [] }))
    expect(done).toBeInstanceOf(Api.auth.LoginTokenSuccess)
  })

  it('delivers inbound with the sender, read receipts, the address book with its hash, and keeps the outbox', async () => {
    const { c, updates } = await client()
    await codeLogin(c)
    const inbound = await control('POST', `/beta/${P}/inbound`, { from: FRIEND, text: 'hello', name: 'Fran Friend', username: 'fran_f', phone_hidden: true })
    expect(inbound).toEqual({ status: 200, json: { message_id: expect.stringMatching(/^\d+$/) } })
    await expect.poll(() => updates.find((u) => u instanceof Api.UpdateNewMessage)).toBeDefined()
    const msg = updates.find((u): u is Api.UpdateNewMessage => u instanceof Api.UpdateNewMessage)!
    const users: unknown = Reflect.get(msg, '_entities')
    const fran = users instanceof Map ? [...users.values()][0] : null
    expect(fran).toMatchObject({ firstName: 'Fran', lastName: 'Friend', username: 'fran_f', phone: null })
    if (!(fran instanceof Api.User) || !fran.accessHash) throw new Error('no user')

    const peer = new Api.InputPeerUser({ userId: fran.id, accessHash: fran.accessHash })
    const sent = await c.sendMessage(peer, { message: 'hi Fran' })
    expect(await rpcOf(c.sendMessage(new Api.InputPeerUser({ userId: fran.id, accessHash: bigInt(1) }), { message: 'x' }))).toBe('PEER_ID_INVALID')
    const outbox = await control('GET', `/beta/${P}/outbox`)
    expect(outbox.json.messages).toEqual([
      {
        id: String(sent.id),
        message_id: null,
        to: FRIEND,
        text: 'hi Fran',
        media_url: null,
        media_content_type: null,
        reply_to: null,
        sent_at: expect.any(Number),
      },
    ])
    expect(await control('POST', `/beta/${P}/receipt`, { message_id: String(sent.id), status: 'read' })).toMatchObject({ status: 200 })
    await expect.poll(() => updates.find((u) => u instanceof Api.UpdateReadHistoryOutbox)).toMatchObject({ maxId: sent.id })
    expect((await control('POST', `/beta/${P}/receipt`, { message_id: '999999', status: 'read' })).status).toBe(404)

    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND, name: 'Fran F' }] })
    await expect.poll(() => updates.some((u) => u instanceof Api.UpdateContactsReset)).toBe(true)
    const book = await c.invoke(new Api.contacts.GetContacts({ hash: bigInt(0) }))
    if (!(book instanceof Api.contacts.Contacts)) throw new Error('no contacts')
    expect(book.users).toEqual([expect.objectContaining({ phone: FRIEND.slice(1), contact: true })])
    const { contactsHash } = await import('../../../../relay/beta/ids')
    expect(await c.invoke(new Api.contacts.GetContacts({ hash: contactsHash(0, [fran.id.toString()]) }))).toBeInstanceOf(Api.contacts.ContactsNotModified)
    expect((await control('GET', `/beta/${P}`)).json.contacts).toBe(1)
  })

  it('plays flood waits, the stranger flag, bans and logout from the app', async () => {
    const { c } = await client()
    await codeLogin(c)
    const friend = await control('POST', `/beta/${P}/inbound`, { from: FRIEND, text: 'hi' })
    expect(friend.status).toBe(200)
    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND }] })
    const book = await c.invoke(new Api.contacts.GetContacts({ hash: bigInt(0) }))
    const fran = book instanceof Api.contacts.Contacts ? book.users[0] : null
    if (!(fran instanceof Api.User) || !fran.accessHash) throw new Error('no user')
    const peer = new Api.InputPeerUser({ userId: fran.id, accessHash: fran.accessHash })

    expect((await control('POST', `/beta/${P}/flood`, { seconds: 30 })).json.flood_seconds).toBe(30)
    expect(await rpcOf(c.sendMessage(peer, { message: 'one' }))).toBe('FLOOD_WAIT_30')
    await control('POST', `/beta/${P}/stranger`)
    expect((await control('GET', `/beta/${P}`)).json.stranger).toBe(true)
    await control('POST', `/beta/${P}/logout`)
    expect((await control('GET', `/beta/${P}`)).json.logged_in_sessions).toBe(0)
    expect(await rpcOf(c.invoke(new Api.updates.GetState()))).toBe('AUTH_KEY_UNREGISTERED')

    const { c: d } = await client()
    await codeLogin(d)
    await control('POST', `/beta/${P}/ban`)
    expect(await rpcOf(d.invoke(new Api.updates.GetState()))).toBe('USER_DEACTIVATED_BAN')
    const { c: e } = await client()
    expect(await rpcOf(e.invoke(new Api.auth.SendCode({ phoneNumber: PHONE.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) })))).toBe(
      'PHONE_NUMBER_BANNED'
    )
  })

  it('plays the link faults: withheld and short updates, a scripted RPC error, a forgotten log, drops, a refusal and a duplicated key', async () => {
    expect((await control('GET', '/beta/dc')).json).toMatchObject({ host: '127.0.0.1', port: sim.dc.address.port, refused_seconds: 0, difference_slice: 100 })
    const { c, updates } = await client()
    await codeLogin(c)
    const start = await c.invoke(new Api.updates.GetState())
    expect((await control('POST', `/beta/${P}/withhold`, { count: 1 })).json.withheld).toBe(1)
    await control('POST', `/beta/${P}/inbound`, { from: FRIEND, text: 'withheld' })
    await control('POST', `/beta/${P}/inbound`, { from: FRIEND, text: 'short', short: true })
    await expect.poll(() => updates.find((u) => u instanceof Api.UpdateShortMessage)).toMatchObject({ message: 'short', pts: start.pts + 2 })
    expect(updates.some((u) => u instanceof Api.UpdateNewMessage)).toBe(false)
    const diff = await c.invoke(new Api.updates.GetDifference({ pts: start.pts, date: start.date, qts: 0 }))
    expect(diff instanceof Api.updates.Difference && diff.newMessages.map((m) => m instanceof Api.Message && m.message)).toEqual(['withheld', 'short'])

    await control('POST', `/beta/${P}/rpc-error`, { method: 'updates.GetState', error: 'FLOOD_WAIT_7', code: 420 })
    expect(await rpcOf(c.invoke(new Api.updates.GetState()))).toBe('FLOOD_WAIT_7')
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)
    expect((await control('POST', `/beta/${P}/rpc-error`, { method: 'x', error: 'lower' })).status).toBe(400)

    await control('POST', `/beta/${P}/forget`, { count: 10 })
    expect(await c.invoke(new Api.updates.GetDifference({ pts: start.pts, date: start.date, qts: 0 }))).toBeInstanceOf(Api.updates.DifferenceTooLong)

    expect((await control('POST', `/beta/${P}/drop`)).json).toEqual({ dropped: 1 })
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)
    expect((await control('POST', '/beta/dc/refuse', { seconds: 1 })).json).toMatchObject({ refused_seconds: 1 })
    const refusedAt = Date.now()
    expect(await c.invoke(new Api.updates.GetState())).toBeInstanceOf(Api.updates.State)
    expect(Date.now() - refusedAt).toBeGreaterThan(500)
    expect((await control('POST', '/beta/dc/config', { difference_slice: 5 })).json).toMatchObject({ difference_slice: 5 })
    // A black hole: the connection stays, nothing is answered until it is restored.
    expect((await control('POST', '/beta/dc/silence', { seconds: 30 })).json).toMatchObject({ silent_seconds: 30 })
    const silenced = await Promise.race([c.invoke(new Api.updates.GetState()), new Promise((r) => setTimeout(() => r('no answer'), 500))])
    expect(silenced).toBe('no answer')
    expect((await control('POST', '/beta/dc/restore')).json).toMatchObject({ silent_seconds: 0, refused_seconds: 0 })

    await control('POST', `/beta/${P}/duplicate`)
    expect(await rpcOf(c.invoke(new Api.updates.GetState()))).toBe('AUTH_KEY_DUPLICATED')
  })
})
