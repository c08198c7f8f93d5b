/** The SMS channel's plain rules, on an injected clock: A2P re-checks, retry backoff, report mapping, senders, signatures. */
import { describe, expect, it } from 'vitest'
import { A2P_CONFIRMED_TTL_MS, A2P_UNCONFIRMED_RECHECK_MS, a2pNeedsCheck } from '../../../../worker/channels/sms/a2p'
import { gatewaySignature, verifyGatewaySignature } from '../../../../worker/channels/sms/gateway-signature'
import { normalizeSender } from '../../../../worker/channels/sms/inbound'
import { retryDelayMs, SMS_RETRY_FOR_MS } from '../../../../worker/channels/sms/outbound'
import { twilioReport } from '../../../../worker/channels/sms/status'

const NOW = Date.parse('2030-01-01T00:00:00.000Z')
const a2p = (confirmed: boolean, checkedAt: number | null) => ({ confirmed, checked_at: checkedAt, messaging_service_sid: null, campaign_status: null })

describe('a2pNeedsCheck', () => {
  it('asks Twilio when never asked', () => {
    expect(a2pNeedsCheck(a2p(false, null), NOW)).toBe(true)
  })
  it('asks again about an unconfirmed number after one minute, not before', () => {
    expect(a2pNeedsCheck(a2p(false, NOW - A2P_UNCONFIRMED_RECHECK_MS + 1), NOW)).toBe(false)
    expect(a2pNeedsCheck(a2p(false, NOW - A2P_UNCONFIRMED_RECHECK_MS), NOW)).toBe(true)
  })
  it('asks again about a confirmed number after 24 hours, not before', () => {
    expect(a2pNeedsCheck(a2p(true, NOW - A2P_CONFIRMED_TTL_MS + 1), NOW)).toBe(false)
    expect(a2pNeedsCheck(a2p(true, NOW - A2P_CONFIRMED_TTL_MS), NOW)).toBe(true)
  })
})

describe('retryDelayMs', () => {
  it('waits 30 s, then as long as the message has waited (the gaps double), at most 10 minutes', () => {
    let waited = 0
    const gaps: number[] = []
    while (waited < SMS_RETRY_FOR_MS) {
      const gap = retryDelayMs(waited)
      gaps.push(gap)
      waited += gap
    }
    expect(gaps.slice(0, 7)).toEqual([30_000, 30_000, 60_000, 120_000, 240_000, 480_000, 600_000])
    expect(gaps.length).toBeGreaterThanOrEqual(10)
  })
})

describe('twilioReport', () => {
  it('maps Twilio statuses: progress, failures with the code, and nothing for the in-between ones', () => {
    expect(twilioReport('delivered', null)).toEqual({ status: 'delivered' })
    expect(twilioReport('read', null)).toEqual({ status: 'read' })
    expect(twilioReport('undelivered', 30003)).toMatchObject({ status: 'failed', code: 30003 })
    expect(twilioReport('failed', null)).toMatchObject({ status: 'failed', code: null })
    for (const s of ['queued', 'accepted', 'scheduled', 'sending', 'receiving', 'whatever']) expect(twilioReport(s, null)).toBeNull()
  })
})

describe('normalizeSender', () => {
  it('keeps E.164, completes local +1 numbers and 00 prefixes, refuses junk', () => {
    expect(normalizeSender('+447700900123', '+447700900000')).toBe('+447700900123')
    expect(normalizeSender('(650) 555-1212', '+14155550100')).toBe('+16505551212')
    expect(normalizeSender('16505551212', '+14155550100')).toBe('+16505551212')
    expect(normalizeSender('00447700900123', '+14155550100')).toBe('+447700900123')
    expect(normalizeSender('ACME', '+14155550100')).toBeNull()
  })
})

describe('verifyGatewaySignature', () => {
  const body = '{"event":"sms:received"}'
  it('accepts the signature over body + timestamp within 5 minutes either way, and nothing else', async () => {
    const ts = String(NOW / 1000)
    const sig = await gatewaySignature('key', body, ts)
    expect(await verifyGatewaySignature('key', body, sig, ts, NOW + 300_000)).toEqual({ ok: true })
    expect(await verifyGatewaySignature('key', body, sig.toUpperCase(), ts, NOW)).toEqual({ ok: true })
    expect(await verifyGatewaySignature('key', body, sig, ts, NOW + 301_000)).toEqual({ ok: false, reason: 'stale' })
    expect(await verifyGatewaySignature('key', body, sig, ts, NOW - 301_000)).toEqual({ ok: false, reason: 'stale' })
    expect(await verifyGatewaySignature('other', body, sig, ts, NOW)).toEqual({ ok: false, reason: 'mismatch' })
    expect(await verifyGatewaySignature('key', body, undefined, ts, NOW)).toEqual({ ok: false, reason: 'missing' })
  })
})
