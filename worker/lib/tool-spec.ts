/**
 * What one MCP tool is: a name and text for the agent, a zod input schema, the REST operation it runs, and the
 * MCP hints. The arguments map onto the REST call by one rule (spec 4.9): names in `{…}` of the path template are
 * path parameters, `body` is the JSON request body, every other argument is a query parameter.
 *
 * One description per operation: a tool is read off its route's definition (`routeTools`): the name is the
 * operationId, the title the summary, the description the first paragraph of the route's description, the input the
 * route's own request schemas (a declared `Idempotency-Key` header becomes `idempotency_key`). Only what MCP needs beyond REST is written beside it (`ToolRow`: hints, a renderer).
 */
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi'
import type { CallToolResult } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { IDEMPOTENCY_HEADER } from '../../schema/api/common'
import type { AppEnv } from '../env'

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const
export type HttpMethod = (typeof HTTP_METHODS)[number]

/** MCP tool annotations (2025-06-18); all four are always stated so no client falls back to a default. */
export type ToolHints = {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  /** True when the call reaches or acts on parties outside the gateway: people, messaging apps, providers, receivers. */
  openWorldHint: boolean
}

export type ToolSpec = {
  name: string
  title: string
  /** For an agent: what it does, when to use it, its limits; one or two sentences (the route description's first paragraph). */
  description: string
  /** A strict object: the arguments an agent may pass (path parameters, query parameters, `body`). */
  input: z.ZodObject
  method: HttpMethod
  /** Relative to /v1, path parameters in braces: `/webhooks/{webhookId}/test`. */
  path: string
  hints: ToolHints
  /** A tool whose REST answer is not JSON renders its own result (get_media: the bytes as an image or audio block). */
  answer?: (res: Response, args: Record<string, unknown>) => Promise<CallToolResult>
}

/** Looks at gateway state only. */
export const READS: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** Reads state that lives at an upstream (a messaging app, a provider, a social network). */
export const READS_UPSTREAM: ToolHints = { ...READS, openWorldHint: true }
/** Changes something outside the gateway without removing anything. */
export const ACTS: ToolHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
/** Removes or replaces something; calling twice leaves the same end state. */
export const REMOVES: ToolHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }

/** Names of the path parameters of a template, in order. */
export function pathParams(template: string): string[] {
  return [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
}

/** The argument of a creating tool that dispatch sends as the route's `Idempotency-Key` header (docs/idempotency.md). */
export const IDEMPOTENCY_KEY_ARG = 'idempotency_key'

/**
 * A strict input object from path parameters, query parameters, an optional body and, for a route that declares
 * `Idempotency-Key`, `idempotency_key` with the header's own schema.
 */
export function toolInput(parts: {
  path?: Record<string, z.ZodType>
  query?: z.ZodObject
  body?: z.ZodType
  bodyOptional?: boolean
  idempotencyKey?: z.ZodType
}): z.ZodObject {
  const shape: Record<string, z.ZodType> = { ...parts.path, ...parts.query?.shape }
  if (parts.body) shape.body = parts.bodyOptional ? parts.body.optional() : parts.body
  if (parts.idempotencyKey) shape[IDEMPOTENCY_KEY_ARG] = parts.idempotencyKey
  return z.strictObject(shape)
}

/** What MCP adds to one REST operation: its tool name (the route's operationId), its hints, and how a non-JSON answer renders. */
export type ToolRow = { name: string; hints: ToolHints; answer?: ToolSpec['answer'] }

const isMethod = (m: string): m is HttpMethod => (HTTP_METHODS as readonly string[]).includes(m)

/** The tool of one route: everything but the row's extras comes from the route definition. */
function toolOf(route: RouteConfig, base: string, row: ToolRow): ToolSpec {
  const method = route.method.toUpperCase()
  const [lead] = (route.description ?? '').split('\n\n')
  if (!isMethod(method) || !route.summary || !lead) throw new Error(`tool ${row.name}: its route needs a method MCP can call, a summary and a description`)
  const request = route.request ?? {}
  const content = request.body?.content['application/json']
  const body = content && 'schema' in content && content.schema instanceof z.ZodType ? content.schema : undefined
  return {
    name: row.name,
    title: route.summary,
    description: lead,
    input: toolInput({
      path: request.params instanceof z.ZodObject ? request.params.shape : undefined,
      query: request.query instanceof z.ZodObject ? request.query : undefined,
      body,
      bodyOptional: request.body?.required === false,
      idempotencyKey: request.headers instanceof z.ZodObject ? request.headers.shape[IDEMPOTENCY_HEADER] : undefined,
    }),
    method,
    path: route.path === '/' ? base : `${base}${route.path}`.replace(/\/$/, ''),
    hints: row.hints,
    ...(row.answer ? { answer: row.answer } : {}),
  }
}

/**
 * The tools of a resource's routes (mounted at `base`, relative to /v1), one per row in the rows' order: each row
 * names the operationId of one of the routes. A row without its route is a programming error and fails at load.
 */
export function routeTools(routes: OpenAPIHono<AppEnv>, base: string, rows: readonly ToolRow[]): ToolSpec[] {
  const byOperation = new Map<string, RouteConfig>()
  for (const def of routes.openAPIRegistry.definitions) if (def.type === 'route' && def.route.operationId) byOperation.set(def.route.operationId, def.route)
  return rows.map((row) => {
    const route = byOperation.get(row.name)
    if (!route) throw new Error(`tool ${row.name}: no route under ${base} has operationId ${row.name}`)
    return toolOf(route, base, row)
  })
}
