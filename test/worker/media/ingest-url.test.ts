/**
 * The shared provider-URL ingest (worker/media/ingest-url.ts) on its own: a body without Content-Length goes to R2 as
 * a multipart upload one part at a time, past the cap it is aborted and reported too large, the SSRF guard refuses
 * private addresses even with loopback allowed for the fakes, and a second run finds the item instead of fetching.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, inject, it } from 'vitest'
import { urlPolicy } from '../../../worker/config'
import { mediaKey } from '../../../worker/media/ids'
import { ingestMediaUrl, PART_BYTES, type IngestDeps } from '../../../worker/media/ingest-url'
import { fakeGraphCdn } from '../../fixtures/fake-graph-types'
import { db } from '../state'

const scope = () => ({ tenantId: `ten_${crypto.randomUUID().slice(0, 8)}`, accountId: '+447700900123' })
const deps = (maxBytes = 64 * 1024 * 1024): IngestDeps => ({ bucket: env.MEDIA, db, policy: urlPolicy(env), maxBytes, now: Date.now(), timeoutMs: 60_000 })
const source = (url: string) => ({ url, contentType: null, fileName: null, kind: null })

describe('ingestMediaUrl', () => {
  it('streams a chunked answer larger than one part into R2 as a multipart upload, byte for byte', async () => {
    const size = PART_BYTES + 123_457
    const url = await fakeGraphCdn.put(inject('fakeGraphUrl'), { content_type: 'video/mp4', size, chunked: true })
    const s = scope()
    const got = await ingestMediaUrl(deps(), s, 'up-1', source(url))
    expect(got).toMatchObject({ status: 'stored', row: { size, contentType: 'video/mp4', kind: 'video' } })
    if (got.status === 'failed') throw new Error(got.reason)
    const obj = await env.MEDIA.get(mediaKey(s.tenantId, s.accountId, got.row.id), { range: { offset: PART_BYTES - 2, length: 4 } })
    expect(obj?.size).toBe(size)
    expect([...new Uint8Array(await obj!.arrayBuffer())]).toEqual([0, 1, 2, 3].map((d) => (PART_BYTES - 2 + d) % 251))
    // A second run finds the stored item and does not fetch again.
    expect(await ingestMediaUrl(deps(), s, 'up-1', source(url))).toMatchObject({ status: 'stored', row: { id: got.row.id } })
    expect(await fakeGraphCdn.fetches(inject('fakeGraphUrl'), url)).toBe(1)
  })

  it('aborts a chunked answer past the cap and reports it too large, leaving no object', async () => {
    const url = await fakeGraphCdn.put(inject('fakeGraphUrl'), { content_type: 'image/png', size: 3 * 1024 * 1024, chunked: true })
    const s = scope()
    const got = await ingestMediaUrl(deps(1024 * 1024), s, 'up-2', source(url))
    expect(got).toMatchObject({ status: 'too_large', row: { status: 'too_large', reason: expect.stringContaining('more than 1048576 bytes') } })
    if (got.status === 'failed') throw new Error(got.reason)
    expect(await env.MEDIA.head(mediaKey(s.tenantId, s.accountId, got.row.id))).toBeNull()
  })

  it('refuses private addresses and non-https URLs without fetching, as a permanent failure', async () => {
    for (const url of ['http://10.0.0.7/media.jpg', 'https://169.254.169.254/latest', 'http://example.com/a.jpg', 'https://metadata.internal/x']) {
      expect(await ingestMediaUrl(deps(), scope(), 'up-3', source(url))).toMatchObject({
        status: 'failed',
        retry: false,
        reason: expect.stringContaining('refused'),
      })
    }
  })
})
