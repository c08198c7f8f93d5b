/**
 * Media links as plain functions with an injected clock: a link checks until its expiry and not after, a changed id,
 * expiry or signature fails, and a stored webhook body gets a fresh signed link for store media only.
 */
import { describe, expect, it } from 'vitest'
import { checkMediaLink, mediaIdOfUrl, signedMediaUrl } from '../../../worker/media/links'
import { signPayload, type MediaSigner } from '../../../worker/media/links-for'
import { parseRange } from '../../../worker/media/serve'

const ID = 'med_0123456789abcdef01234567'
const OTHER = 'med_fedcba9876543210fedcba98'
const query = (url: string) => Object.fromEntries(new URL(url).searchParams) as { tenant: string; expires: string; signature: string }
const TENANT = 'ten_a'

describe('signed media links', () => {
  it('pass until the expiry and are refused as expired from then on', async () => {
    const now = Date.UTC(2026, 10, 24, 12)
    const url = await signedMediaUrl('k', 'https://gw.example', TENANT, ID, now + 60_000)
    const q = query(url)
    expect(await checkMediaLink('k', ID, q, now + 59_000)).toEqual({ ok: true })
    expect(await checkMediaLink('k', ID, q, now + 60_000)).toEqual({ ok: false, reason: 'expired' })
  })

  it('are refused as bad_signature for another id, another expiry, another key or a missing part', async () => {
    const now = Date.now()
    const q = query(await signedMediaUrl('k', 'https://gw.example', TENANT, ID, now + 60_000))
    expect(await checkMediaLink('k', OTHER, q, now)).toEqual({ ok: false, reason: 'bad_signature' })
    expect(await checkMediaLink('k', ID, { ...q, expires: String(Number(q.expires) + 1) }, now)).toEqual({ ok: false, reason: 'bad_signature' })
    expect(await checkMediaLink('other', ID, q, now)).toEqual({ ok: false, reason: 'bad_signature' })
    expect(await checkMediaLink('k', ID, { ...q, expires: undefined }, now)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it('name their id, and only ours', () => {
    expect(mediaIdOfUrl(`https://gw.example/media/${ID}`)).toBe(ID)
    expect(mediaIdOfUrl(`https://gw.example/media/${ID}?expires=1&signature=ab`)).toBe(ID)
    expect(mediaIdOfUrl('https://cdn.example.com/photo.jpg')).toBeNull()
  })
})

describe('signPayload', () => {
  const sign: MediaSigner = async (url) => `${url}?signed`

  it('signs the media link of a stored message event and leaves other bodies byte for byte', async () => {
    const withMedia = JSON.stringify({
      event: 'message.received',
      message: { id: 'm', media: { url: `https://gw.example/media/${ID}`, content_type: 'image/jpeg', id: ID } },
    })
    expect(JSON.parse(await signPayload(sign, withMedia)).message.media.url).toBe(`https://gw.example/media/${ID}?signed`)
    const linkOnly = JSON.stringify({ event: 'message.received', message: { id: 'm', media: { url: 'https://cdn.example.com/a.jpg', content_type: null } } })
    expect(await signPayload(sign, linkOnly)).toBe(linkOnly)
    const account = JSON.stringify({ event: 'account.connected', account: { id: 'x' } })
    expect(await signPayload(sign, account)).toBe(account)
  })
})

describe('parseRange', () => {
  it('reads one range of the three forms and refuses what lies outside', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ offset: 0, length: 10 })
    expect(parseRange('bytes=90-', 100)).toEqual({ offset: 90, length: 10 })
    expect(parseRange('bytes=-5', 100)).toEqual({ offset: 95, length: 5 })
    expect(parseRange('bytes=95-200', 100)).toEqual({ offset: 95, length: 5 })
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable')
    expect(parseRange('bytes=5-2', 100)).toBe('unsatisfiable')
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull()
    expect(parseRange(undefined, 100)).toBeNull()
  })
})
