// The passkey helper's bookmarklet is made from helper.js (scripts/passkey-bookmarklet.mjs): both copies must be current,
// the extension must stay on web.whatsapp.com with no permission, and the bookmarklet must decode to the helper itself.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BOOKMARKLET_TS, BOOKMARKLET_TXT, bookmarklet, bookmarkletModule, HELPER } from '../../scripts/passkey-bookmarklet.mjs'
import { PASSKEY_BOOKMARKLET } from '../../worker/channels/alpha/passkey-bookmarklet'

const helper = readFileSync(HELPER, 'utf8')

describe('the alpha passkey helper', () => {
  it('is handed out as a bookmarklet made from the current helper.js, in the docs and on the guide page', () => {
    const url = bookmarklet(helper)
    expect(readFileSync(BOOKMARKLET_TXT, 'utf8')).toBe(`${url}\n`)
    expect(readFileSync(BOOKMARKLET_TS, 'utf8')).toBe(bookmarkletModule(url))
    expect(PASSKEY_BOOKMARKLET).toBe(url)
    expect(decodeURIComponent(url.slice('javascript:'.length))).toBe(helper)
  })

  it('is an extension that runs on web.whatsapp.com only and asks for no permission', () => {
    const manifest: unknown = JSON.parse(readFileSync(join(HELPER, '../manifest.json'), 'utf8'))
    expect(manifest).toEqual({
      manifest_version: 3,
      name: expect.any(String),
      version: expect.any(String),
      description: expect.any(String),
      content_scripts: [{ matches: ['https://web.whatsapp.com/*'], js: ['helper.js'], run_at: 'document_idle' }],
    })
  })
})
