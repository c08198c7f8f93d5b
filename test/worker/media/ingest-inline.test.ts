/**
 * Inline attachments into the media store (the phone's MMS): stored with the provider's type under the id derived from
 * the message, over the cap kept as a `too_large` row with the reason and no bytes, and a second run writing nothing.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { getMedia } from '../../../worker/db/media'
import { mediaIdFor, mediaKey } from '../../../worker/media/ids'
import { ingestMediaBytes } from '../../../worker/media/ingest-inline'
import { db } from '../state'

const scope = () => ({ tenantId: `t_${crypto.randomUUID()}`, accountId: '+447700900123' })
const bytes = new TextEncoder().encode('a tiny picture')

describe('ingestMediaBytes', () => {
  it('stores the bytes with the provider’s type and a row, once', async () => {
    const s = scope()
    const deps = { bucket: env.MEDIA, db, maxBytes: 1024, now: 1_000 }
    const got = await ingestMediaBytes(deps, s, 'gw-mms:1', { bytes, contentType: 'image/png', fileName: 'a.png', kind: null })
    expect(got).toMatchObject({ status: 'stored', row: { kind: 'image', contentType: 'image/png', size: bytes.length, fileName: 'a.png' } })
    const id = await mediaIdFor(s.tenantId, s.accountId, 'gw-mms:1')
    const obj = await env.MEDIA.get(mediaKey(s.tenantId, s.accountId, id))
    expect(obj?.httpMetadata?.contentType).toBe('image/png')
    expect(new Uint8Array(await obj!.arrayBuffer())).toEqual(bytes)
    // A second run (a re-delivered webhook) finds the row: different bytes are not written.
    await ingestMediaBytes({ ...deps, now: 2_000 }, s, 'gw-mms:1', { bytes: new Uint8Array([1]), contentType: 'image/png', fileName: null, kind: null })
    expect((await getMedia(db, id))?.createdAt).toBe(1_000)
    expect(new Uint8Array(await (await env.MEDIA.get(mediaKey(s.tenantId, s.accountId, id)))!.arrayBuffer())).toEqual(bytes)
  })

  it('keeps an item over the cap as too_large with the reason and no bytes', async () => {
    const s = scope()
    const got = await ingestMediaBytes({ bucket: env.MEDIA, db, maxBytes: 4, now: 1 }, s, 'gw-mms:big', {
      bytes,
      contentType: null,
      fileName: null,
      kind: null,
    })
    expect(got).toMatchObject({ status: 'too_large', row: { size: bytes.length, contentType: 'application/octet-stream', kind: 'document' } })
    expect(got.row.reason).toContain('over the 4-byte cap (MEDIA_MAX_BYTES)')
    const id = await mediaIdFor(s.tenantId, s.accountId, 'gw-mms:big')
    expect(await env.MEDIA.head(mediaKey(s.tenantId, s.accountId, id))).toBeNull()
  })
})
