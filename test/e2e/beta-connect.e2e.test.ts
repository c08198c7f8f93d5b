/**
 * Logging a beta account in end to end: the real local server (wrangler dev), a real relay process running the real
 * beta driver (relay/beta: login steps, SRP, probe) against the simulated network, and a receiver taking the signed
 * webhook deliveries. Every connect path reaches `connected` through REST and through the MCP tools (official SDK
 * client): code; code + two-step password; QR; QR + password. Then the refusals of docs/channels/beta.md: a wrong
 * code (the login stays open and the right code still works), a number with no beta account, a banned number.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loginBeta, loginCode, mcpCalls, restCalls, simBeta, statusBecomes, type Answer, type BetaCalls, type LoginPath } from './beta-login'
import { connectMcp } from './mcp-client'
import { enc, eventually, issueRelayToken, newPhone, simPost, type Json, type RelayProc } from './relay-harness'
import { relaySuite } from './relay-suite'
import { ISO_DATE_TIME } from './webhook-inbox'

const suite = relaySuite({ keepRelays: true })
let relay: RelayProc
const clients: Client[] = []

beforeAll(async () => {
  relay = suite.relay((await issueRelayToken(suite.server)).token)
  await relay.linked
})
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
})

/** A tenant with a webhook, and its beta operations through REST or through MCP. */
async function tenant(via: 'REST' | 'MCP') {
  const t = await suite.tenantWithHook()
  if (via === 'REST') return { ...t, calls: restCalls(suite.api, t.key) }
  const { client } = await connectMcp(suite.server.url, { 'X-API-Key': t.key })
  clients.push(client)
  return { ...t, calls: mcpCalls(client) }
}

/** An account event of a beta number as spec part 6 shows it. */
function accountEvent(event: string, phone: string, status: string, reason: string | null) {
  return { event, created_at: ISO_DATE_TIME, account_id: phone, channel: 'beta', account: { id: phone, channel: 'beta', identifier: phone, status, reason } }
}

/** A channel-connection refusal (spec part 7): the HTTP status as error_code, and the stable code opening `error`. */
function refusal(status: number, code: string) {
  return { status, json: { success: false, error_code: status, error: expect.stringMatching(new RegExp(`^${code}: .+`)) } }
}

const PATHS: Array<{ name: string; path: LoginPath }> = [
  { name: 'code', path: { mode: 'code', password: null } },
  { name: 'code and two-step password', path: { mode: 'code', password: 'correct horse battery' } },
  { name: 'QR', path: { mode: 'qr', password: null } },
  { name: 'QR and two-step password', path: { mode: 'qr', password: 'tr0ub4dor&3' } },
]

describe.each(['REST', 'MCP'] as const)('beta login through %s', (via) => {
  it.each(PATHS)('reaches connected by $name, with account.connected, and logs out on removal', async ({ path }) => {
    const { key, hook, calls } = await tenant(via)
    const phone = newPhone('1444')
    if (path.password) expect((await simPost(suite.sim, `/beta/${enc(phone)}/password`, { password: path.password })).status).toBe(200)
    const trace = await loginBeta(calls, suite.sim, phone, path)

    const base = { success: true, phone_number: phone }
    if (path.mode === 'code') {
      expect(trace.started).toEqual({ status: 200, json: expect.objectContaining({ ...base, status: 'code_required', session_id: expect.any(String) }) })
      if (path.password) {
        expect(trace.code).toEqual({
          status: 200,
          json: { ...base, status: 'password_required', telegram_user_id: null, username: null, password_hint: expect.toBeOneOf([null, expect.any(String)]) },
        })
      }
    } else {
      const { login_token, qr_url } = trace.started.json
      expect(trace.started).toEqual({ status: 200, json: expect.objectContaining({ ...base, status: 'qr_required', session_id: expect.any(String) }) })
      expect(login_token).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(qr_url).toBe(`tg://login?token=${login_token}`)
    }
    const verified = path.password ? trace.passwordStep : trace.code
    if (verified) {
      expect(verified).toEqual({
        status: 200,
        json: { ...base, status: 'connected', telegram_user_id: expect.stringMatching(/^\d+$/), username: expect.toBeOneOf([null, expect.any(String)]) },
      })
    }

    const status = await statusBecomes(calls, phone, 'connected')
    expect(status).toEqual({ ...base, status: 'connected', reason: null, message: null, telegram_user_id: expect.stringMatching(/^\d+$/), live: true })
    if (verified) expect(status.telegram_user_id).toBe(verified.json.telegram_user_id)
    expect((await hook.next()).payload).toEqual(accountEvent('account.connected', phone, 'connected', null))
    const accounts = (await suite.api(key, 'GET', '/accounts')).json.accounts
    expect(accounts).toEqual([
      expect.objectContaining({ id: phone, channel: 'beta', status: 'connected', limits: expect.objectContaining({ ramp_day: null }) }),
    ])
    expect(await simBeta(suite.sim, phone)).toMatchObject({ logged_in_sessions: 1, pending_login: null })
    // Neither secret is echoed by any answer, nor written to the relay's log.
    const answers = JSON.stringify([trace.started, trace.code, trace.passwordStep, status, accounts])
    for (const secret of [trace.userCode, path.password]) {
      if (secret === null) continue
      expect(answers).not.toContain(`"${secret}"`)
      expect(relay.output()).not.toContain(`"${secret}"`)
    }
    if (path.password) expect(relay.output()).not.toContain(path.password)

    expect(await calls.disconnect(phone)).toEqual({ status: 200, json: { ...base, status: 'removed' } })
    expect((await hook.next()).payload).toEqual(accountEvent('account.disconnected', phone, 'disconnected', 'removed'))
    await eventually(async () => (await simBeta(suite.sim, phone)).logged_in_sessions === 0, 10_000, 'logged out upstream')
    expect(await calls.disconnect(phone)).toEqual({ status: 200, json: { ...base, status: 'removed' } })
    await hook.expectExactly(['account.connected', 'account.disconnected'])
  })
})

/**
 * Starts a code login and lets the first refusal come wherever beta gives it: the connect call itself when the
 * number fails at sending the code, or the code step (the number passes `auth.SendCode` and fails at `auth.SignIn`).
 */
async function firstRefusal(calls: BetaCalls, phone: string): Promise<Answer> {
  const started = await calls.connect({ phone_number: phone, mode: 'code' })
  if (started.status !== 200) return started
  const waiting = await eventually(
    async () => {
      const s = (await calls.status(phone)).json
      return s.status === 'initializing' ? undefined : s
    },
    10_000,
    'the login to start'
  )
  if (waiting.status !== 'code_required') return { status: 200, json: waiting }
  const code = await fetch(`${suite.sim.url}/sim/beta/${enc(phone)}/code`)
  return calls.code(phone, code.status === 200 ? String(((await code.json()) as Json).code) : '12345')
}

describe('beta login refusals (REST)', () => {
  it('answers a wrong code with 400 code_invalid, keeps the login open, and takes the right code next', async () => {
    const { hook, calls } = await tenant('REST')
    const phone = newPhone('1444')
    expect((await calls.connect({ phone_number: phone, mode: 'code' })).json.status).toBe('code_required')
    const code = await loginCode(suite.sim, phone)
    const wrong = code === '11111' ? '22222' : '11111'
    expect(await calls.code(phone, wrong)).toEqual(refusal(400, 'code_invalid'))
    expect((await calls.status(phone)).json).toMatchObject({ status: 'code_required' })
    expect(await simBeta(suite.sim, phone)).toMatchObject({ pending_login: 'code', logged_in_sessions: 0 })
    expect(await calls.code(phone, code)).toMatchObject({ status: 200, json: { status: 'connected' } })
    expect((await hook.next()).payload).toEqual(accountEvent('account.connected', phone, 'connected', null))
    // A step after the login finished has nothing to answer.
    expect(await calls.code(phone, code)).toEqual(refusal(409, 'no_login_pending'))
    await hook.expectExactly(['account.connected'])
  })

  it('answers a number without a beta account with 404 unknown_number and ends the login', async () => {
    const { calls } = await tenant('REST')
    const phone = newPhone('1444')
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/unregistered`)).status).toBe(200)
    expect(await firstRefusal(calls, phone)).toEqual(refusal(404, 'unknown_number'))
    expect(await statusBecomes(calls, phone, 'disconnected')).toMatchObject({ reason: 'unknown_number' })
    expect(await calls.code(phone, '12345')).toEqual(refusal(409, 'no_login_pending'))
    expect(await simBeta(suite.sim, phone)).toMatchObject({ registered: false, logged_in_sessions: 0 })
  })

  it('answers a banned number with 403 number_banned and reports it blocked_by_beta', async () => {
    const { calls } = await tenant('REST')
    const phone = newPhone('1444')
    expect((await simPost(suite.sim, `/beta/${enc(phone)}/ban`)).status).toBe(200)
    expect(await firstRefusal(calls, phone)).toEqual(refusal(403, 'number_banned'))
    expect(await statusBecomes(calls, phone, 'error')).toMatchObject({ reason: 'blocked_by_beta' })
    expect(await simBeta(suite.sim, phone)).toMatchObject({ banned: true, logged_in_sessions: 0 })
  })
})
