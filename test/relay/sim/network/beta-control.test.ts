/** The beta control API over real HTTP, with a simulated beta client (real TL over the sim's WebSocket) as the app. */
import bigInt from 'big-integer'
import { Api, errors } from 'telegram'
import { computeCheck } from 'telegram/Password'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SimBetaClient } from '../../../../relay/sim/beta-client'
import { configureSim } from '../../../../relay/sim/config'
import { SIM_BETA_CREDS } from '../../../../relay/sim/network/beta-network'
import { startSimNetwork, type SimServer } from '../../../../relay/sim/network/server'

let sim: SimServer
const clients: SimBetaClient[] = []
beforeEach(async () => {
  sim = await startSimNetwork({ betaTiming: { codeMs: 60_000, qrMs: 30_000 } })
  configureSim({ url: sim.url })
})
afterEach(async () => {
  for (const c of clients.splice(0)) await c.destroy()
  await sim.close()
})

const PHONE = '+15557780001'
const P = encodeURIComponent(PHONE)
const FRIEND = '+15557780002'

const control = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sim.url}/sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

async function client(session = ''): Promise<SimBetaClient> {
  const c = new SimBetaClient(session, PHONE)
  clients.push(c)
  await c.connect()
  return c
}

const { apiId, apiHash } = SIM_BETA_CREDS

async function codeLogin(c: SimBetaClient): Promise<Api.auth.Authorization> {
  const sent = await c.invoke(new Api.auth.SendCode({ phoneNumber: PHONE.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
  if (!(sent instanceof Api.auth.SentCode)) throw new Error('no code sent')
  const { json } = await control('GET', `/beta/${P}/code`)
  const auth = await c.invoke(new Api.auth.SignIn({ phoneNumber: PHONE.slice(1), phoneCodeHash: sent.phoneCodeHash, phoneCode: String(json.code) }))
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
    const c = await client()
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
    const again = await client(c.saveSession())
    const me = await again.invoke(new Api.users.GetUsers({ id: [new Api.InputUserSelf()] }))
    expect(Array.isArray(me) && me[0] instanceof Api.User && me[0].phone).toBe(PHONE.slice(1))
  })

  it('checks a two-step password by SRP and answers PHONE_NUMBER_UNOCCUPIED for an unregistered number', async () => {
    expect((await control('POST', `/beta/${P}/password`, { password: 'hunter2', hint: 'cat' })).json.has_password).toBe(true)
    const c = await client()
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
    const d = new SimBetaClient('', other)
    clients.push(d)
    await d.connect()
    const sent = await d.invoke(new Api.auth.SendCode({ phoneNumber: other.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) }))
    const code = (await control('GET', `/beta/${encodeURIComponent(other)}/code`)).json.code
    const hash = sent instanceof Api.auth.SentCode ? sent.phoneCodeHash : ''
    expect(await rpcOf(d.invoke(new Api.auth.SignIn({ phoneNumber: other.slice(1), phoneCodeHash: hash, phoneCode: String(code) })))).toBe(
      'PHONE_NUMBER_UNOCCUPIED'
    )
  })

  it('accepts the QR shown for the number and pushes UpdateLoginToken', async () => {
    const c = await client()
    const updates: unknown[] = []
    c.onUpdate((u) => updates.push(u))
    const token = await c.invoke(new Api.auth.ExportLoginToken({ apiId, apiHash, exceptIds: [] }))
    expect(token).toBeInstanceOf(Api.auth.LoginToken)
    expect((await control('GET', `/beta/${P}`)).json.pending_login).toBe('qr')
    expect(await control('POST', `/beta/${P}/qr/accept`)).toMatchObject({ status: 200 })
    await expect.poll(() => updates.some((u) => u instanceof Api.UpdateLoginToken)).toBe(true)
    const done = await c.invoke(new Api.auth.ExportLoginToken({ apiId, apiHash, exceptIds: [] }))
    expect(done).toBeInstanceOf(Api.auth.LoginTokenSuccess)
  })

  it('delivers inbound with the sender, read receipts, the address book with its hash, and keeps the outbox', async () => {
    const c = await client()
    const updates: unknown[] = []
    c.onUpdate((u) => updates.push(u))
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
    const sent = await c.sendMessage(peer, 'hi Fran', 'msg_1')
    expect(await rpcOf(c.sendMessage(new Api.InputPeerUser({ userId: fran.id, accessHash: bigInt(1) }), 'x'))).toBe('PEER_ID_INVALID')
    const outbox = await control('GET', `/beta/${P}/outbox`)
    expect(outbox.json.messages).toEqual([
      { id: String(sent.id), message_id: 'msg_1', to: FRIEND, text: 'hi Fran', media_url: null, media_content_type: null, sent_at: expect.any(Number) },
    ])
    expect(await control('POST', `/beta/${P}/receipt`, { message_id: 'msg_1', status: 'read' })).toMatchObject({ status: 200 })
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
    const c = await client()
    await codeLogin(c)
    const friend = await control('POST', `/beta/${P}/inbound`, { from: FRIEND, text: 'hi' })
    expect(friend.status).toBe(200)
    await control('POST', `/beta/${P}/contacts`, { contacts: [{ phone: FRIEND }] })
    const book = await c.invoke(new Api.contacts.GetContacts({ hash: bigInt(0) }))
    const fran = book instanceof Api.contacts.Contacts ? book.users[0] : null
    if (!(fran instanceof Api.User) || !fran.accessHash) throw new Error('no user')
    const peer = new Api.InputPeerUser({ userId: fran.id, accessHash: fran.accessHash })

    expect((await control('POST', `/beta/${P}/flood`, { seconds: 30 })).json.flood_seconds).toBe(30)
    expect(await rpcOf(c.sendMessage(peer, 'one'))).toBe('FLOOD_WAIT_30')
    await control('POST', `/beta/${P}/stranger`)
    expect((await control('GET', `/beta/${P}`)).json.stranger).toBe(true)
    await control('POST', `/beta/${P}/logout`)
    expect((await control('GET', `/beta/${P}`)).json.logged_in_sessions).toBe(0)
    expect(await rpcOf(c.invoke(new Api.updates.GetState()))).toBe('AUTH_KEY_UNREGISTERED')

    const d = await client()
    await codeLogin(d)
    await control('POST', `/beta/${P}/ban`)
    expect(await rpcOf(d.invoke(new Api.updates.GetState()))).toBe('USER_DEACTIVATED_BAN')
    const e = await client()
    expect(await rpcOf(e.invoke(new Api.auth.SendCode({ phoneNumber: PHONE.slice(1), apiId, apiHash, settings: new Api.CodeSettings({}) })))).toBe(
      'PHONE_NUMBER_BANNED'
    )
  })
})
