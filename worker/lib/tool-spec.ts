/**
 * What one MCP tool is: a name and text for the agent, a zod input schema, the REST operation it runs, and the
 * MCP hints. The arguments map onto the REST call by one rule (spec 4.9): names in `{…}` of the path template are
 * path parameters, `body` is the JSON request body, every other argument is a query parameter.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { E164, IdempotencyKeyHeader } from '../../schema/api/common'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

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
  /** For an agent: what it does, when to use it, its limits; one or two sentences. */
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

export const phoneNumberArg = E164.describe('The account phone number in E.164 format, such as +15551234567')

/** The argument that carries a creating call's `Idempotency-Key` header (the header's own schema and text). */
export const IDEMPOTENCY_KEY_ARG = 'idempotency_key'

/** The tool of a route that declares `Idempotency-Key`: it takes `idempotency_key`, sent as that header. */
export function withIdempotencyKey(tool: ToolSpec): ToolSpec {
  return { ...tool, input: tool.input.extend({ [IDEMPOTENCY_KEY_ARG]: IdempotencyKeyHeader.shape['Idempotency-Key'] }) }
}

/** Names of the path parameters of a template, in order. */
export function pathParams(template: string): string[] {
  return [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
}

/** A strict input object from path parameters, query parameters and an optional body. */
export function toolInput(parts: { path?: Record<string, z.ZodType>; query?: z.ZodObject; body?: z.ZodType; bodyOptional?: boolean }): z.ZodObject {
  const shape: Record<string, z.ZodType> = { ...parts.path, ...parts.query?.shape }
  if (parts.body) shape.body = parts.bodyOptional ? parts.body.optional() : parts.body
  return z.strictObject(shape)
}
