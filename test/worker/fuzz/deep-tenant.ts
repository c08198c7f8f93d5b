/**
 * The tenant the fuzz suites call with: connected accounts on every channel (custom, SMS through the fake Twilio,
 * the page inbox through the fake Graph API, alpha and beta stored as a relay would leave them), a message each
 * way, one awaiting approval, a webhook and a spare key, so generated requests that name real ids reach the deep
 * paths. `known` lists those ids by the parameter or field name that carries them.
 */
import { eq } from 'drizzle-orm'
import { inject } from 'vitest'
import { accounts } from '../../../schema/d1'
import { base64urlText } from '../../../worker/lib/base64url'
import { fakeGraphApp } from '../../fixtures/fake-graph-types'
import { connectTwilio } from '../channels/sms/sms-helpers'
import { CONFIG_ID, loadPages, newAppId, PAGE_A, SECRET, selectPage } from '../channels/social/social-helpers'
import { body, call, connectCustom, newTenant, pushInbound, receiverChannel, send, type TestTenant } from '../helpers'
import { addAccount, db } from '../state'
import { createWebhook } from '../webhook-helpers'

export type DeepTenant = {
  t: TestTenant
  /** Real ids by the name of the path parameter, query parameter or body field that takes them. */
  known: Record<string, readonly unknown[]>
  /** Addresses a generated `url` may point at: the local receiver, and loopback ports nothing listens on. */
  uris: readonly string[]
}

/** A valid wait holds its request for timeout_s (up to 55 s); 0, and the boundary's 1 s, keep the run short. */
export const NARROW = { timeout_s: { maximum: 0 } }

const ALPHA = '+15557770001'
const BETA = '+15557770002'
const SMS = '+447700900555'

/** Connecting through REST holds the plan's one place; parking the account lets the next channel connect too. */
async function parked<T>(t: TestTenant, connect: () => Promise<T>): Promise<T> {
  const out = await connect()
  await db.update(accounts).set({ status: 'disconnected' }).where(eq(accounts.tenantId, t.tenantId))
  return out
}

async function ok<T = Record<string, unknown>>(res: Response, what: string): Promise<T> {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${await res.text()}`)
  return body<T>(res)
}

export async function deepTenant(): Promise<DeepTenant> {
  const t = await newTenant()
  const receiver = await parked(t, () => connectCustom(t, 'fuzz'))
  await parked(t, () => connectTwilio(t, SMS))
  await parked(t, async () => {
    const appId = newAppId()
    await fakeGraphApp(inject('fakeGraphUrl'), appId).register(SECRET, CONFIG_ID, [PAGE_A])
    await ok(
      await call('/v1/channels/meta/app', { method: 'PUT', key: t.key, json: { app_id: appId, app_secret: SECRET, configuration_id: CONFIG_ID } }),
      'meta app'
    )
    await loadPages(t)
    const selected = await selectPage(t, PAGE_A.id)
    if (selected.status !== 200) throw new Error(`select page: ${selected.status} ${JSON.stringify(selected.body)}`)
  })
  await db.update(accounts).set({ status: 'connected' }).where(eq(accounts.tenantId, t.tenantId))
  await addAccount(t.tenantId, { id: ALPHA, channel: 'alpha_web' })
  await addAccount(t.tenantId, { id: BETA, channel: 'beta', identifier: '@fuzzbeta' })

  const inbound = await pushInbound(t, { body: 'hello', fromId: 'person-1' })
  const sent = await send(t, { account_id: 'custom', to: { external_id: 'person-1' }, text: 'hi back' })
  const approvalKey = await ok<{ key: string }>(
    await call('/v1/keys', { method: 'POST', key: t.key, json: { approval: true, label: 'fuzz approval' } }),
    'approval key'
  )
  const held = await send({ ...t, key: approvalKey.key }, { account_id: 'custom', to: { external_id: 'never-wrote' }, text: 'first' })
  const spare = await ok<{ id: string }>(await call('/v1/keys', { method: 'POST', key: t.key, json: { label: 'fuzz spare' } }), 'spare key')
  const hook = await createWebhook(t, { url: receiverChannel('fuzz-hook').url, subscribed_to: ['message.received'] })

  const listed = await ok<{ accounts: { id: string }[] }>(await call('/v1/accounts', { key: t.key }), 'accounts')
  const messages = [inbound.body.message_id, sent.body.message_id, held.body.message_id].filter((id): id is string => typeof id === 'string')
  const contacts = [inbound.body.contact_id].filter((id): id is string => typeof id === 'string')
  const phones = [ALPHA, BETA, SMS]
  const cursors = ['l1:0', 'l1:999999999999999', 'w1:0', 'w1:999999999999999', 'a1:1', `d1:999999999999999:dlv_${'A'.repeat(44)}`].map(base64urlText)
  const uris = [receiver.url, receiverChannel('fuzz-uri').url, 'http://127.0.0.1:9/closed', 'https://127.0.0.1:9/closed.png']
  return {
    t,
    known: {
      phoneNumber: phones,
      phone_number: phones,
      account_id: listed.accounts.map((a) => a.id),
      accounts: [listed.accounts.map((a) => a.id)],
      id: messages,
      contact_id: contacts,
      external_id: ['person-1'],
      fromId: ['person-1', 'person-2'],
      webhookId: [hook.webhook.id],
      keyId: [spare.id],
      key_id: [spare.id],
      page_id: [PAGE_A.id],
      // Well-formed cursors of every kind at the ends of the sequence, so cursor parsing is passed and the query runs.
      before: cursors,
      cursor: cursors,
      url: uris,
      webhook_url: uris,
      media_url: uris,
      mediaUrl: uris,
    },
    uris,
  }
}
