// scripts/provider-vars.mjs: which of `npm start`'s environment variables reach the Worker (the provider base URLs
// of the SMS and page-inbox channels, when set), and nothing else of that environment.
import { describe, expect, it } from 'vitest'
import { PROVIDER_VARS, providerVars } from '../../scripts/provider-vars.mjs'

describe('providerVars', () => {
  it('passes every provider base URL that is set, and only those', () => {
    const urls = {
      TWILIO_API_URL: 'http://127.0.0.1:9001',
      TWILIO_MESSAGING_API_URL: 'http://127.0.0.1:9002',
      SMS_GATEWAY_URL: 'http://127.0.0.1:9003/3rdparty/v1',
      GRAPH_API_URL: 'http://127.0.0.1:9004',
      GRAPH_DIALOG_URL: 'http://127.0.0.1:9005/dialog',
      GRAPH_API_VERSION: 'v26.0',
    }
    expect(Object.keys(urls)).toEqual(PROVIDER_VARS)
    expect(providerVars({ ...urls, ADMIN_TOKEN: 'never passed this way', PATH: '/usr/bin' })).toEqual(urls)
  })

  it('leaves an unset or empty one to wrangler.toml', () => {
    expect(providerVars({ TWILIO_API_URL: '', GRAPH_API_VERSION: undefined, SMS_GATEWAY_URL: 'http://127.0.0.1:9003' })).toEqual({
      SMS_GATEWAY_URL: 'http://127.0.0.1:9003',
    })
    expect(providerVars({})).toEqual({})
  })

  it('names only variables the Worker reads from wrangler.toml [vars]', async () => {
    const { readFileSync } = await import('node:fs')
    const toml = readFileSync(new URL('../../wrangler.toml', import.meta.url), 'utf8')
    for (const name of PROVIDER_VARS) expect(toml, name).toMatch(new RegExp(`^${name}\\s*=`, 'm'))
  })
})
