/**
 * What a stored item is served as: only inert types (raster images, audio, video) inline, everything else (HTML, SVG,
 * XML, PDF, scripts, unknown) as an attachment, and every answer with nosniff and a CSP that runs nothing; links built
 * on MEDIA_BASE_URL when it is set, and that origin serving media links only.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import type { MediaRow } from '../../../worker/db/media'
import { mediaKey } from '../../../worker/media/ids'
import { mediaSigner } from '../../../worker/media/links-for'
import { MEDIA_CSP, serveMedia } from '../../../worker/media/serve'

const ID = 'med_00112233445566778899aabb'

async function stored(contentType: string, fileName: string | null = null): Promise<MediaRow> {
  const row: MediaRow = {
    id: ID,
    tenantId: 'ten_serve',
    accountId: '+15550001212',
    kind: 'document',
    contentType,
    size: 5,
    fileName,
    status: 'stored',
    reason: null,
    createdAt: Date.now(),
  }
  await env.MEDIA.put(mediaKey(row.tenantId, row.accountId, row.id), new TextEncoder().encode('<x/>!'))
  return row
}

describe('serveMedia', () => {
  it('shows raster images, audio and video inline', async () => {
    for (const type of ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'audio/ogg; codecs=opus', 'audio/mpeg', 'video/mp4', 'VIDEO/QuickTime']) {
      const res = (await serveMedia(env.MEDIA, await stored(type, 'a file.bin'), null))!
      await res.arrayBuffer()
      expect(res.headers.get('content-disposition'), type).toBe("inline; filename*=UTF-8''a%20file.bin")
    }
  })

  it('serves HTML, SVG, XML, PDF, scripts and unknown types as attachments', async () => {
    for (const type of [
      'text/html',
      'text/html; charset=utf-8',
      'image/svg+xml',
      'application/xhtml+xml',
      'text/xml',
      'application/xml',
      'application/pdf',
      'application/javascript',
      'text/plain',
      'application/octet-stream',
      'image/x-unknown',
    ]) {
      const res = (await serveMedia(env.MEDIA, await stored(type), null))!
      await res.arrayBuffer()
      expect(res.headers.get('content-disposition'), type).toBe(`attachment; filename*=UTF-8''${ID}`)
      expect(res.headers.get('content-type'), type).toBe(type)
    }
  })

  it('sends nosniff and a CSP that forbids every load and sandboxes the document, on every answer (range and 416 too)', async () => {
    const row = await stored('image/png')
    for (const range of [null, 'bytes=0-1', 'bytes=9-']) {
      const res = (await serveMedia(env.MEDIA, row, range))!
      await res.arrayBuffer()
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBe(MEDIA_CSP)
    }
    expect(MEDIA_CSP).toBe("default-src 'none'; sandbox")
  })
})

describe('MEDIA_BASE_URL', () => {
  const mediaEnv = { ...env, PUBLIC_BASE_URL: 'https://gateway.test', MEDIA_BASE_URL: 'https://media.gateway.test/' }

  it('is the origin signed links are built on; without it the stored origin stays', async () => {
    const stored = `https://gateway.test/media/${ID}`
    expect(await mediaSigner(mediaEnv, 'ten_a', Date.now())(stored)).toMatch(
      new RegExp(`^https://media\\.gateway\\.test/media/${ID}\\?tenant=ten_a&expires=\\d+&signature=[0-9a-f]+$`)
    )
    expect(await mediaSigner({ ...env, MEDIA_BASE_URL: '' }, 'ten_a', Date.now())(stored)).toMatch(new RegExp(`^https://gateway\\.test/media/${ID}\\?`))
  })

  it('serves media links only on that origin: pages, the API and MCP answer 404 there', async () => {
    const fetch = (url: string) => app.fetch(new Request(url), mediaEnv, createExecutionContext())
    for (const path of ['/approvals?token=x', '/v1/openapi.json', '/docs', '/mcp', '/connect/alpha-web?token=x']) {
      const res = await fetch(`https://media.gateway.test${path}`)
      expect(res.status, path).toBe(404)
      await res.arrayBuffer()
    }
    // The signed-link route itself still answers there (403: this link is not signed), and the public origin is whole.
    expect((await fetch(`https://media.gateway.test/media/${ID}`)).status).toBe(403)
    expect((await fetch('https://gateway.test/v1/openapi.json')).status).toBe(200)
  })
})
