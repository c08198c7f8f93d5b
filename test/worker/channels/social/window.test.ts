// The 24-hour window as the channel's send check sees it, on an injected clock: both edges and a person who never wrote.
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { socialChannel } from '../../../../worker/channels/social'
import { WINDOW_MS } from '../../../../worker/channels/social/window'
import type { AccountRow } from '../../../../worker/db/accounts'
import { ApiError } from '../../../../worker/errors'
import { db } from '../../state'

const WROTE_AT = Date.UTC(2026, 10, 20, 9, 30)
const MIN = 60_000
const account: AccountRow = {
  tenantId: 't',
  id: '1001',
  channel: 'social',
  identifier: 'Page',
  status: 'connected',
  statusReason: null,
  connectedAt: 0,
  createdAt: 0,
  updatedAt: 0,
}

function check(lastInboundAt: number | null, now: number) {
  const contact = { id: 'con_x', known: true, hasInbound: lastInboundAt !== null, lastInboundAt }
  return socialChannel.checkSend!({ env, db, account, contact, mediaUrl: null, now })
}

async function refusal(p: Promise<void>): Promise<{ status: number; code: string } | null> {
  try {
    await p
    return null
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, code: err.code }
    throw err
  }
}

describe('the page inbox send check', () => {
  it('lets a reply through at 23:59 after the person’s last message', async () => {
    expect(await refusal(check(WROTE_AT, WROTE_AT + 23 * 60 * MIN + 59 * MIN))).toBeNull()
  })

  it('lets a reply through at exactly 24:00, the window’s last moment', async () => {
    expect(await refusal(check(WROTE_AT, WROTE_AT + WINDOW_MS))).toBeNull()
  })

  it('refuses a reply at 24:01 with 409 outside_window', async () => {
    expect(await refusal(check(WROTE_AT, WROTE_AT + 24 * 60 * MIN + MIN))).toEqual({ status: 409, code: 'outside_window' })
  })

  it('refuses a person who never wrote with 409 needs_inbound_first', async () => {
    expect(await refusal(check(null, WROTE_AT))).toEqual({ status: 409, code: 'needs_inbound_first' })
  })

  it('declares strangers not allowed with needs_inbound_first for the send path', () => {
    expect(socialChannel.strangers).toMatchObject({ allowed: false, status: 409, code: 'needs_inbound_first' })
    expect(socialChannel).toMatchObject({ id: 'social', path: 'meta', address: 'social', transport: 'direct', warmUp: false })
  })
})
