// tools/list: the spec's tool names exactly, valid JSON Schemas an MCP client can use, and a table that is consistent.
import type { RouteConfig } from '@hono/zod-openapi'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { EVENT_TYPES } from '../../../schema/events'
import { v1 } from '../../../worker/app'
import { pathParams } from '../../../worker/lib/tool-spec'
import { TOOLS } from '../../../worker/mcp/tools'
import { NOT_IMPLEMENTED } from '../../../worker/channels/planned'
import { newTenant } from '../helpers'
import { rpc } from './rpc'

/** Spec 4.9 table, the channel tools of 4.5 to 4.7, and list_messages. */
const SPEC_TOOLS = [
  'send_message',
  'wait_for_messages',
  'get_message',
  'list_messages',
  'list_accounts',
  'get_usage',
  'list_webhook_events',
  'list_webhooks',
  'connect_alpha',
  'get_alpha_qr',
  'get_alpha_status',
  'disconnect_alpha',
  'connect_beta',
  'submit_beta_code',
  'submit_beta_password',
  'get_beta_status',
  'disconnect_beta',
  'create_webhook',
  'update_webhook',
  'delete_webhook',
  'get_webhook_health',
  'reenable_webhook',
  'get_webhook_signing_secret',
  'rotate_webhook_signing_secret',
  'turn_off_webhook_signing',
  'test_webhook',
  'connect_sms',
  'connect_android_sms',
  'get_sms_status',
  'get_android_sms_status',
  'disconnect_sms',
  'set_social_app',
  'connect_social_inbox',
  'get_social_inbox_status',
  'list_pages',
  'select_page',
  'disconnect_social_inbox',
  'set_custom_channel_webhook',
  'push_custom_channel_message',
  'get_custom_channel_status',
  'disconnect_custom_channel',
]
/** The webhook operations of 4.8 the project added beyond the spec's tool table (deliveries log, replay), and media (issue 13). */
const PROJECT_TOOLS = ['list_webhook_deliveries', 'replay_webhook', 'get_media']
/** Issue 25: what an agent does in a conversation, each read off its route. */
const CONVERSATION_TOOLS = ['check_send', 'react_to_message', 'remove_reaction', 'mark_read', 'send_typing', 'lookup_number']

type ListedTool = {
  name: string
  title: string
  description: string
  inputSchema: Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] }
  annotations: Record<string, unknown>
}

async function listTools(): Promise<ListedTool[]> {
  const t = await newTenant()
  // No initialize first: the server is stateless.
  const answer = await rpc(t.key, 'tools/list')
  expect(answer.status).toBe(200)
  return (answer.result as { tools: ListedTool[] }).tools
}

const strictAjv = () => new Ajv({ strict: true, validateFormats: false, allErrors: true })

describe('tools/list', () => {
  it('lists exactly the tools of the spec, each once', async () => {
    const names = (await listTools()).map((t) => t.name)
    expect(new Set(names).size).toBe(names.length)
    expect([...names].sort()).toEqual([...SPEC_TOOLS, ...PROJECT_TOOLS, ...CONVERSATION_TOOLS].sort())
  })

  it('gives every tool an input schema that is valid draft-07 JSON Schema and compiles in strict mode', async () => {
    const ajv = strictAjv()
    for (const tool of await listTools()) {
      expect(ajv.validateSchema(tool.inputSchema), `${tool.name}: ${ajv.errorsText()}`).toBe(true)
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow()
      expect(tool.inputSchema.type, tool.name).toBe('object')
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
      // Inlined: several MCP clients do not resolve references.
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain('$ref')
    }
  })

  it('gives every tool a title, a description of at most two sentences, and all four hints', async () => {
    for (const tool of await listTools()) {
      expect(tool.title.length, tool.name).toBeGreaterThan(3)
      const sentences = tool.description.split(/[.!?](?:\s|$)/).filter((s) => s.trim().length > 0)
      expect(sentences.length, `${tool.name}: ${tool.description}`).toBeLessThanOrEqual(2)
      expect(tool.description.length, tool.name).toBeLessThanOrEqual(400)
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        expect(typeof tool.annotations[hint], `${tool.name}.${hint}`).toBe('boolean')
      }
    }
  })

  it('lists schemas that accept a well-formed call and reject request fields outside body', async () => {
    const ajv = strictAjv()
    const send = ajv.compile((await listTools()).find((t) => t.name === 'send_message')!.inputSchema)
    expect(send({ body: { to: { contact_id: 'ct_1' }, text: 'Hello' } })).toBe(true)
    expect(send({ to: { contact_id: 'ct_1' }, text: 'Hello' })).toBe(false)
    expect(send({ body: { to: { contact_id: 'ct_1' }, text: 'x'.repeat(10) }, extra: 1 })).toBe(false)
    const wait = ajv.compile((await listTools()).find((t) => t.name === 'wait_for_messages')!.inputSchema)
    expect(wait({ timeout_s: 55 })).toBe(true)
    expect(wait({ timeout_s: 56 })).toBe(false)
  })

  it('lists the valid event names in the webhook tools, so a client can refuse a wrong one before calling', async () => {
    const ajv = strictAjv()
    const tools = await listTools()
    const create = ajv.compile(tools.find((t) => t.name === 'create_webhook')!.inputSchema)
    expect(create({ body: { url: 'https://hooks.example.com/a', subscribed_to: ['message.received'] } })).toBe(true)
    expect(create({ body: { url: 'https://hooks.example.com/a', subscribed_to: ['message.exploded'] } })).toBe(false)
    expect(create({ body: { url: 'https://hooks.example.com/a', subscribed_to: [] } })).toBe(false)
    const test = ajv.compile(tools.find((t) => t.name === 'test_webhook')!.inputSchema)
    expect(test({ webhookId: 'crm-sync' })).toBe(true)
    expect(test({ webhookId: 'crm-sync', body: { event: [...EVENT_TYPES].at(-1) } })).toBe(true)
    expect(test({ webhookId: 'crm-sync', body: { event: 'nope' } })).toBe(false)
    expect(test({ body: {} })).toBe(false)
    const deliveries = ajv.compile(tools.find((t) => t.name === 'list_webhook_deliveries')!.inputSchema)
    expect(deliveries({ webhookId: '0', limit: 100, status: 'failed' })).toBe(true)
    expect(deliveries({ webhookId: '0', status: 'lost' })).toBe(false)
  })
})

type RouteRequest = NonNullable<RouteConfig['request']>

/** The routes of the REST app by `METHOD /path` (relative to /v1, braces for parameters), as OpenAPI documents them. */
function restRoutes(): Map<string, RouteRequest> {
  const routes = new Map<string, RouteRequest>()
  for (const def of v1.openAPIRegistry.definitions) {
    if (def.type !== 'route') continue
    const path = def.route.path.length > 1 ? def.route.path.replace(/\/$/, '') : def.route.path
    routes.set(`${def.route.method.toUpperCase()} ${path}`, def.route.request ?? {})
  }
  return routes
}

const shapeOf = (schema: unknown) => (schema instanceof z.ZodObject ? schema.shape : {})

describe('the tool table', () => {
  it('gives every tool of a built route exactly that route’s zod schemas, and every other tool a 501 placeholder', () => {
    const routes = restRoutes()
    let built = 0
    for (const tool of TOOLS) {
      const route = routes.get(`${tool.method} ${tool.path}`)
      if (!route) {
        const placeholder = NOT_IMPLEMENTED.some(([method, path]) => method === tool.method && path.replace(/:(\w+)/g, '{$1}') === tool.path)
        expect(placeholder, `${tool.name}: no REST route ${tool.method} ${tool.path}`).toBe(true)
        continue
      }
      built++
      const shape = tool.input.shape
      const params = shapeOf(route.params)
      const query = shapeOf(route.query)
      // Identity, not equality: the tool holds the very schema objects the REST validator runs.
      for (const name of pathParams(tool.path)) expect(shape[name], `${tool.name}.${name}`).toBe(params[name])
      for (const [name, schema] of Object.entries(query)) expect(shape[name], `${tool.name}.${name}`).toBe(schema)
      const media = route.body?.content['application/json']
      const body = media && 'schema' in media ? media.schema : undefined
      if (body !== undefined) {
        const given = shape.body
        expect(route.body?.required === false ? given instanceof z.ZodOptional && given.unwrap() : given, `${tool.name}.body`).toBe(body)
      }
      // A route that declares Idempotency-Key gives its tool idempotency_key, the header's own schema.
      const idempotency = shapeOf(route.headers)['Idempotency-Key']
      if (idempotency !== undefined) expect(shape.idempotency_key, `${tool.name}.idempotency_key`).toBe(idempotency)
      const expected = [...pathParams(tool.path), ...Object.keys(query), ...(body !== undefined ? ['body'] : []), ...(idempotency ? ['idempotency_key'] : [])]
      expect(Object.keys(shape).sort(), tool.name).toEqual(expected.sort())
    }
    // Messaging, the custom channel and webhooks: the check above ran on them, not only on placeholders.
    expect(built).toBe(TOOLS.length - NOT_IMPLEMENTED.length)
  })

  it('reads every built tool off its route: operationId = name, summary = title, the description’s first paragraph = its text', () => {
    const byOperation = new Map<string, RouteConfig>()
    for (const def of v1.openAPIRegistry.definitions) if (def.type === 'route' && def.route.operationId) byOperation.set(def.route.operationId, def.route)
    let matched = 0
    for (const tool of TOOLS) {
      const route = byOperation.get(tool.name)
      // A planned tool has no route yet; the test above checks it answers 501.
      if (!route) continue
      matched++
      expect(route.method.toUpperCase(), tool.name).toBe(tool.method)
      expect(tool.title, tool.name).toBe(route.summary)
      expect(route.description?.split('\n\n')[0], tool.name).toBe(tool.description)
    }
    expect(matched).toBe(TOOLS.length - NOT_IMPLEMENTED.length)
  })

  it('makes every path parameter of a template a required argument', () => {
    for (const tool of TOOLS) {
      const shape = tool.input.shape
      for (const name of pathParams(tool.path)) {
        expect(shape[name], `${tool.name}.${name}`).toBeDefined()
        expect(shape[name]!.safeParse(undefined).success, `${tool.name}.${name} must be required`).toBe(false)
      }
    }
  })

  it('marks exactly the GET operations read-only, and the dry run of a send (a POST that changes nothing)', () => {
    for (const tool of TOOLS) expect(tool.hints.readOnlyHint, tool.name).toBe(tool.method === 'GET' || tool.name === 'check_send')
  })

  it('maps no two tools to the same REST operation', () => {
    const ops = TOOLS.map((t) => `${t.method} ${t.path}`)
    expect(new Set(ops).size).toBe(ops.length)
  })
})
