/**
 * A thin client for SMS Gateway for Android (upstreams.md 4), written against the server's OpenAPI rather than the
 * npm client (which still posts to the legacy `/message`): send, webhooks, devices, settings. Basic auth in every
 * mode. `apiUrl` is the cloud/private root with `/3rdparty/v1`, or the phone's local server (no prefix).
 */
import { z } from 'zod'

export type GatewayCreds = { apiUrl: string; username: string; password: string }

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
    this.name = 'GatewayError'
  }
}

/**
 * The events connect registers, one webhook each (the gateway takes one event per webhook). `mms:downloaded` carries
 * an inbound MMS with its files base64-encoded in the body (not `mms:received`, which has only the headers).
 */
export const GATEWAY_EVENTS = ['sms:received', 'sms:sent', 'sms:delivered', 'sms:failed', 'mms:downloaded'] as const

const TIMEOUT_MS = 10_000
const ErrorBody = z.object({ message: z.string() }).loose()

async function call(creds: GatewayCreds, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  let res: Response
  try {
    res = await fetch(`${creds.apiUrl}${path}`, {
      method,
      headers: {
        Authorization: `Basic ${btoa(`${creds.username}:${creds.password}`)}`,
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    })
  } catch (err) {
    throw new GatewayError(0, `the SMS gateway could not be reached: ${err instanceof Error ? err.message : String(err)}`)
  }
  const text = await res.text()
  let json: unknown = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    // Not JSON (an empty 204, a proxy page): only the status counts.
  }
  if (res.status >= 300) {
    const err = ErrorBody.safeParse(json)
    throw new GatewayError(res.status, err.success ? err.data.message : `the SMS gateway answered HTTP ${res.status}`)
  }
  return { status: res.status, json }
}

const Device = z.object({ id: z.string(), name: z.string().nullable().optional(), lastSeen: z.string().nullable().optional() }).loose()
export type GatewayDevice = z.infer<typeof Device>

/** Cloud/private: the account's devices with `lastSeen`. Doubles as the credential check. */
export async function listDevices(creds: GatewayCreds): Promise<GatewayDevice[]> {
  return z.array(Device).parse((await call(creds, 'GET', '/devices')).json ?? [])
}

/** Local mode: `GET /` answers `{status, model}` behind Basic auth (the credential check). */
export async function localInfo(creds: GatewayCreds): Promise<void> {
  await call(creds, 'GET', '/')
}

/** Sets the webhook signing key on the phone (settings.webhooks.signingKey), so the service knows it. */
export async function setSigningKey(creds: GatewayCreds, signingKey: string): Promise<void> {
  await call(creds, 'PATCH', '/settings', { webhooks: { signingKey } })
}

/** Registers (or, with the same id, replaces) one webhook. */
export async function registerWebhook(creds: GatewayCreds, hook: { id: string; url: string; event: string }): Promise<void> {
  await call(creds, 'POST', '/webhooks', hook)
}

export async function deleteWebhook(creds: GatewayCreds, id: string): Promise<void> {
  try {
    await call(creds, 'DELETE', `/webhooks/${encodeURIComponent(id)}`)
  } catch (err) {
    // Already gone is what we wanted.
    if (!(err instanceof GatewayError && err.status === 404)) throw err
  }
}

export type GatewaySend = { accepted: true } | { duplicate: true }

/**
 * Enqueues one SMS with our message id as the gateway's id, so a repeated attempt is refused as a duplicate (409)
 * instead of sent twice. A 503 (phone offline, queue full) is thrown as GatewayError(503).
 */
export async function enqueueSms(creds: GatewayCreds, m: { id: string; to: string; text: string }): Promise<GatewaySend> {
  try {
    await call(creds, 'POST', '/messages', { id: m.id, textMessage: { text: m.text }, phoneNumbers: [m.to], withDeliveryReport: true })
    return { accepted: true }
  } catch (err) {
    if (err instanceof GatewayError && err.status === 409) return { duplicate: true }
    throw err
  }
}
