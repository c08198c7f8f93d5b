/**
 * The scope table's rules and every MCP tool for keys of each scope: tools/list shows exactly the callable tools and
 * a hidden tool answers its REST 403. Every REST route × key kind × method is walked in key-matrix.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { TOOLS } from '../../../worker/mcp/tools'
import { fullGrant } from '../../../worker/safety/grant'
import { scopeRuleFor } from '../../../worker/safety/scopes'
import { toolAllowed } from '../../../worker/safety/tool-scope'
import { body, call, newTenant } from '../helpers'
import { callTool, rpc } from '../mcp/rpc'
import { adminKey, keysOfEveryScope } from './helpers'

const SAMPLE: Record<string, string> = { phoneNumber: '+15550009999', webhookId: 'no-such-hook', id: 'msg_nope', keyId: 'key_nope' }

describe('the scope table', () => {
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

  it('shows a full key with approval, accounts or an expiry none of the owner’s tools, and a limited one no webhook tool', async () => {
    const t = await newTenant()
    const names = async (fields: Record<string, unknown>) =>
      ((await rpc((await adminKey(t.tenantId, fields)).key, 'tools/list')).result as { tools: Listed[] }).tools.map((x) => x.name)
    const ownerOnly = ['create_webhook', 'update_webhook', 'get_webhook_signing_secret', 'push_custom_channel_message', 'connect_sms', 'set_social_app']
    for (const fields of [{ approval: true }, { accounts: ['custom'] }, { expires_at: new Date(Date.now() + 3600_000).toISOString() }]) {
      const listed = await names(fields)
      expect(listed, JSON.stringify(fields)).toContain('send_message')
      expect(
        listed.filter((n) => ownerOnly.includes(n)),
        JSON.stringify(fields)
      ).toEqual([])
    }
    expect((await names({ accounts: ['custom'] })).filter((n) => n.includes('webhook'))).toEqual(['list_webhook_events'])
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
