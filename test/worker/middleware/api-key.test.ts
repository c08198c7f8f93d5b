// The REST key check, and the in-process shortcut MCP tool calls use (vouchFor): a vouched request is served as
// the tenant it carries without a second lookup; nothing a client sends can be vouched.
import { createExecutionContext } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { app } from '../../../worker/app'
import { tenantForApiKey } from '../../../worker/db/api-keys'
import { database } from '../../../worker/db/client'
import { vouchFor } from '../../../worker/middleware/api-key'
import { ORIGIN, body, call, newTenant } from '../helpers'

// In the same isolate, as the MCP handler calls it (exports.default.fetch would copy the Request across a boundary).
const inProcess = (request: Request) => app.fetch(request, env, createExecutionContext())

describe('apiKeyAuth', () => {
  it('serves a vouched request as its tenant', async () => {
    const t = await newTenant()
    const tenant = (await tenantForApiKey(database(env.DB), t.key))!
    const res = await inProcess(vouchFor(new Request(`${ORIGIN}/v1/accounts`), tenant))
    expect(res.status).toBe(200)
    expect(await body(res)).toEqual({ accounts: [] })
  })

  it('still asks an identical request that was not vouched for its key', async () => {
    const res = await inProcess(new Request(`${ORIGIN}/v1/accounts`))
    expect(res.status).toBe(401)
  })

  it('takes the key from Bearer, X-API-Key or the apiKey query parameter on REST', async () => {
    const t = await newTenant()
    for (const keyPlace of ['bearer', 'header', 'query'] as const) {
      expect((await call('/v1/accounts', { key: t.key, keyPlace })).status, keyPlace).toBe(200)
    }
  })
})
