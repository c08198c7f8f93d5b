/**
 * The scope table against every REST operation and every MCP tool, for keys of each scope: a route without a
 * decision fails here, a refusal is 403 in its family's shape, and tools/list shows exactly the callable tools.
 */
import { describe, expect, it } from 'vitest'
import { KEY_SCOPES } from '../../../schema/d1'
import { errorFamilyFor, v1 } from '../../../worker/app'
import { TOOLS } from '../../../worker/mcp/tools'
import { scopeCovers, fullGrant } from '../../../worker/safety/grant'
import { scopeRuleFor, scopesAllowing, templateOf } from '../../../worker/safety/scopes'
import { toolAllowed } from '../../../worker/safety/tool-scope'
import { body, call, newTenant } from '../helpers'
import { callTool, rpc } from '../mcp/rpc'
import { keysOfEveryScope } from './helpers'

/** Every operation the REST app answers with a key: `METHOD /template`, relative to /v1. */
function appRoutes(): { method: string; template: string }[] {
  const seen = new Map<string, { method: string; template: string }>()
  for (const r of v1.routes) {
    if (r.method === 'ALL' || r.path.includes('*') || r.path === '/openapi.json') continue
    const template = templateOf(r.path)
    seen.set(`${r.method} ${template}`, { method: r.method, template })
  }
  return [...seen.values()]
}

const SAMPLE: Record<string, string> = { phoneNumber: '+15550009999', webhookId: 'no-such-hook', id: 'msg_nope', keyId: 'key_nope' }
const concrete = (template: string) => template.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(SAMPLE[n] ?? 'x'))

describe('the scope table', () => {
  it('has a decision for every route of the app', () => {
    const routes = appRoutes()
    expect(routes.length).toBeGreaterThan(30)
    const missing = routes.filter((r) => !scopeRuleFor(r.method, r.template)).map((r) => `${r.method} ${r.template}`)
    expect(missing, 'routes without a scope decision (add a rule to worker/safety/scopes.ts)').toEqual([])
  })

  it('has a decision for every operation of the OpenAPI document', () => {
    const doc = v1.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } })
    const missing: string[] = []
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
        if (!item[method] || path === '/openapi.json') continue
        const template = path.length > 1 ? path.replace(/\/$/, '') : path
        if (!scopeRuleFor(method, template)) missing.push(`${method.toUpperCase()} ${template}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('refuses an unknown route to narrow keys only (fail closed)', () => {
    expect(scopeRuleFor('POST', '/contacts')).toBeUndefined()
    expect(toolAllowed({ method: 'POST', path: '/contacts' }, { ...fullGrant('k'), scope: 'reply' })).toBe(false)
    expect(toolAllowed({ method: 'POST', path: '/contacts' }, fullGrant('k'))).toBe(true)
  })

  it('decides a new channel route by its family rule: GET reads, anything else needs the owner', () => {
    expect(scopeRuleFor('GET', '/channels/pigeon/status')?.needs).toBe('read')
    expect(scopeRuleFor('HEAD', '/channels/pigeon/status')?.needs).toBe('read')
    expect(scopeRuleFor('POST', '/channels/pigeon/connect')?.needs).toBe('owner')
    expect(scopeRuleFor('DELETE', '/channels/pigeon')?.needs).toBe('owner')
  })
})

describe('every REST operation with a key of each scope', () => {
  it('answers 403 key_scope exactly where the scope does not cover the route, in the family’s shape', async () => {
    const t = await newTenant()
    const keys = await keysOfEveryScope(t)
    const routes = appRoutes()
    const wrong: string[] = []
    for (const route of routes) {
      const rule = scopeRuleFor(route.method, route.template)!
      let path = `/v1${concrete(route.template)}`
      if (route.template === '/messages/wait') path += '?timeout_s=0'
      for (const scope of KEY_SCOPES) {
        const res = await call(path, { method: route.method, key: keys[scope], json: route.method === 'GET' ? undefined : {} })
        const text = await res.text()
        const refused = res.status === 403 && /key_scope|may not do this/.test(text)
        // The full key here is the owner's (the tenant's default key): it passes everything.
        const expected = scope !== 'full' && (rule.needs === 'owner' || !scopeCovers(scope, rule.needs))
        if (refused !== expected) wrong.push(`${scope} ${route.method} ${route.template}: ${res.status} ${text.slice(0, 120)}`)
        if (refused) {
          const json = JSON.parse(text) as Record<string, unknown>
          const shape =
            errorFamilyFor(path.split('?')[0]!) === 'messaging'
              ? { error_code: 'key_scope', error: expect.stringContaining(`${scopesAllowing(rule.needs)} may`) }
              : { success: false, error: expect.stringContaining('key may'), error_code: 403 }
          expect(json, `${scope} ${route.method} ${route.template}`).toEqual(shape)
        }
      }
    }
    expect(wrong).toEqual([])
  })
})

type Listed = { name: string; description: string }

describe('every MCP tool with a key of each scope', () => {
  it('lists exactly the tools the key may call, and a hidden tool answers its REST 403', async () => {
    const t = await newTenant()
    const keys = await keysOfEveryScope(t)
    for (const scope of ['read', 'reply'] as const) {
      const grant = { ...fullGrant('k'), scope, label: 'x' }
      const listed = ((await rpc(keys[scope], 'tools/list')).result as { tools: Listed[] }).tools.map((x) => x.name).sort()
      expect(listed, scope).toEqual(
        TOOLS.filter((tool) => toolAllowed(tool, grant))
          .map((x) => x.name)
          .sort()
      )
      for (const tool of TOOLS.filter((x) => !toolAllowed(x, grant))) {
        const args = Object.fromEntries([...tool.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, SAMPLE[m[1]!] ?? 'x']))
        const answer = await callTool(keys[scope], tool.name, 'body' in tool.input.shape ? { ...args, body: {} } : args)
        expect(answer.status, `${scope} ${tool.name}`).toBe(403)
        expect(answer.isError).toBe(true)
        expect(answer.text, `${scope} ${tool.name}`).toMatch(/key_scope|may not do this/)
      }
    }
  })

  it('shows a read key no send or connect tool, and a reply key send_message saying whom it may reach', async () => {
    const t = await newTenant()
    const keys = await keysOfEveryScope(t)
    const read = ((await rpc(keys.read, 'tools/list')).result as { tools: Listed[] }).tools
    expect(read.map((x) => x.name)).not.toContain('send_message')
    expect(read.map((x) => x.name).filter((n) => /^(connect|disconnect|create|update|delete|set|push)_/.test(n))).toEqual([])
    expect(read.map((x) => x.name)).toEqual(
      expect.arrayContaining(['list_accounts', 'wait_for_messages', 'get_message', 'list_messages', 'get_usage', 'list_audit'])
    )
    const reply = ((await rpc(keys.reply, 'tools/list')).result as { tools: Listed[] }).tools
    const send = reply.find((x) => x.name === 'send_message')
    expect(send?.description).toMatch(/only to a person who wrote to that account in the last 24 h/)
    expect(reply.map((x) => x.name).filter((n) => /^(connect|disconnect|create|update|delete|set|push|rotate|turn_off)_/.test(n))).toEqual([])
  })

  it('keeps a default key’s tools/list as today’s table, while list_audit still answers it', async () => {
    const t = await newTenant()
    const names = ((await rpc(t.key, 'tools/list')).result as { tools: Listed[] }).tools.map((x) => x.name)
    expect(names).not.toContain('list_audit')
    expect(names).toHaveLength(TOOLS.length - 1)
    expect((await callTool(t.key, 'list_audit')).status).toBe(200)
  })
})

describe('refusal bodies', () => {
  it('say which scope would allow the call', async () => {
    const t = await newTenant()
    const keys = await keysOfEveryScope(t)
    const res = await call('/v1/messages', { method: 'POST', key: keys.read, json: { to: { contact_id: 'x' }, text: 'hi' } })
    expect(res.status).toBe(403)
    expect(await body(res)).toEqual({ error_code: 'key_scope', error: 'This read key may not do this (sending a message); a reply or full key may' })
  })
})
