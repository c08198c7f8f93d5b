/**
 * Logging a beta account in through the gateway the way a user does, against the simulated network (its control
 * API: docs of /sim/beta in the README): by code (read from the simulated app), by QR (scanned on the simulated
 * phone), each with the two-step password when the account has one. The calls go through REST or through the MCP
 * tools with the official SDK client, behind one shape, so each path runs both ways. No vitest here: the
 * relay benchmark logs accounts in with it too.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { SimServer } from '../../relay/sim/network/server'
import { callTool } from './mcp-client'
import type { LocalServer } from './local-server'
import { apiOf, enc, eventually, simGet, simPost, storedContacts, type Api, type Json } from './relay-harness'

export type Answer = { status: number; json: Json }

/** beta's connection operations (spec 4.4), each answering the REST status and body. */
export type BetaCalls = {
  via: 'REST' | 'MCP'
  connect(body: { phone_number: string; mode?: 'code' | 'qr'; force_new?: boolean }): Promise<Answer>
  code(phone: string, code: string): Promise<Answer>
  password(phone: string, password: string): Promise<Answer>
  status(phone: string): Promise<Answer>
  disconnect(phone: string): Promise<Answer>
}

export function restCalls(api: Api, key: string): BetaCalls {
  return {
    via: 'REST',
    connect: (body) => api(key, 'POST', '/channels/beta/connect', body),
    code: (phone, code) => api(key, 'POST', `/channels/beta/connect/${enc(phone)}/code`, { code }),
    password: (phone, password) => api(key, 'POST', `/channels/beta/connect/${enc(phone)}/password`, { password }),
    status: (phone) => api(key, 'GET', `/channels/beta/connect/${enc(phone)}/status`),
    disconnect: (phone) => api(key, 'DELETE', `/channels/beta/${enc(phone)}`),
  }
}

/** The same operations as the agent runs them: connect_beta, submit_beta_code, submit_beta_password, get_beta_status, disconnect_beta. */
export function mcpCalls(client: Client): BetaCalls {
  const call = async (name: string, args: Record<string, unknown>): Promise<Answer> => {
    const { status, json, isError } = await callTool<Json>(client, name, args)
    // A tool result is an error exactly when the REST answer it carries is.
    if (isError !== status >= 400) throw new Error(`${name}: isError ${isError} with HTTP ${status}`)
    return { status, json }
  }
  return {
    via: 'MCP',
    connect: (body) => call('connect_beta', { body }),
    code: (phoneNumber, code) => call('submit_beta_code', { phoneNumber, body: { code } }),
    password: (phoneNumber, password) => call('submit_beta_password', { phoneNumber, body: { password } }),
    status: (phoneNumber) => call('get_beta_status', { phoneNumber }),
    disconnect: (phoneNumber) => call('disconnect_beta', { phoneNumber }),
  }
}

/** The simulated account's state (GET /sim/beta/{phone}). */
export function simBeta(sim: SimServer, phone: string): Promise<Json> {
  return simGet<Json>(sim, `/beta/${enc(phone)}`)
}

/** The login code the simulated app received for the newest code login, once it has come. */
export async function loginCode(sim: SimServer, phone: string): Promise<string> {
  return eventually(
    async () => {
      const res = await fetch(`${sim.url}/sim/beta/${enc(phone)}/code`)
      if (res.status !== 200) return undefined
      const body = (await res.json()) as Json
      return typeof body.code === 'string' ? body.code : undefined
    },
    10_000,
    `the login code of ${phone}`
  )
}

/** Polls the status operation until it answers `status` (and `reason`, when given). */
export async function statusBecomes(calls: BetaCalls, phone: string, status: string, timeoutMs = 10_000, reason?: string | null): Promise<Json> {
  return eventually(
    async () => {
      const r = await calls.status(phone)
      return r.json.status === status && (reason === undefined || r.json.reason === reason) ? r.json : undefined
    },
    timeoutMs,
    `${phone} ${status}${reason ? ` (${reason})` : ''}`
  )
}

export type LoginPath = { mode: 'code' | 'qr'; password: string | null }

/** Every answer a login gave, in order, for the test to check. */
export type LoginTrace = { started: Answer; code: Answer | null; passwordStep: Answer | null; userCode: string | null }

function must(answer: Answer, what: string, statuses: string[]): Answer {
  if (answer.status !== 200 || !statuses.includes(answer.json.status))
    throw new Error(`${what}: expected 200 ${statuses.join('/')}, got ${answer.status} ${JSON.stringify(answer.json)}`)
  return answer
}

/**
 * Logs `phone` in by `path` to `connected`. The simulated account must already carry the password, if any
 * (POST /sim/beta/{phone}/password). The code comes from the simulated app; a QR is accepted on the simulated phone.
 */
export async function loginBeta(calls: BetaCalls, sim: SimServer, phone: string, path: LoginPath): Promise<LoginTrace> {
  const started = await calls.connect({ phone_number: phone, mode: path.mode })
  const trace: LoginTrace = { started, code: null, passwordStep: null, userCode: null }
  if (path.mode === 'code') {
    must(started, 'connect (code)', ['code_required', 'initializing'])
    if (started.json.status === 'initializing') await statusBecomes(calls, phone, 'code_required')
    trace.userCode = await loginCode(sim, phone)
    trace.code = must(await calls.code(phone, trace.userCode), 'submit the code', [path.password ? 'password_required' : 'connected'])
  } else {
    must(started, 'connect (qr)', ['qr_required', 'initializing'])
    await eventually(async () => (await simBeta(sim, phone)).pending_login === 'qr', 10_000, `a QR login of ${phone} shown`)
    const accepted = await simPost(sim, `/beta/${enc(phone)}/qr/accept`)
    if (accepted.status !== 200) throw new Error(`qr/accept: ${accepted.status} ${JSON.stringify(accepted.json)}`)
    await statusBecomes(calls, phone, path.password ? 'password_required' : 'connected')
  }
  if (path.password) trace.passwordStep = must(await calls.password(phone, path.password), 'submit the password', ['connected'])
  return trace
}

/**
 * Logs a number in by code through REST with `contacts` as its upstream address book, and waits until the gateway
 * stored that address book (it decides who may be messaged by phone).
 */
export async function linkBeta(
  server: LocalServer,
  sim: SimServer,
  key: string,
  phone: string,
  contacts: Array<{ phone: string; name?: string }> = []
): Promise<void> {
  const set = await simPost(sim, `/beta/${enc(phone)}/contacts`, { contacts })
  if (set.status !== 200) throw new Error(`set the address book of ${phone}: ${set.status} ${JSON.stringify(set.json)}`)
  const calls = restCalls(apiOf(server), key)
  await loginBeta(calls, sim, phone, { mode: 'code', password: null })
  await statusBecomes(calls, phone, 'connected')
  const wanted = contacts.map((c) => c.phone)
  await eventually(
    () => {
      const stored = new Set(storedContacts(server, phone).map((c) => c.phone))
      return wanted.every((p) => stored.has(p))
    },
    10_000,
    `the address book of ${phone} at the gateway`
  )
}
