/**
 * The one request validator. Every resource sub-app is created by `resourceApp()`, whose defaultHook turns a zod
 * failure anywhere into an ApiError(400) with a field-specific `error_code` and a readable message.
 */
import { OpenAPIHono } from '@hono/zod-openapi'
import { createMiddleware } from 'hono/factory'
import type { z } from 'zod'
import type { AppEnv } from './env'
import type { ErrorCode } from './lib/error-codes'
import { ApiError } from './errors'

type ValidationResult = { success: true } | { success: false; error: z.ZodError }

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.')
  return path ? `${path}: ${issue.message}` : issue.message
}

/** `fieldCodes` maps a top-level field (query parameter or body member) to the error_code its failures carry. */
export function validationHook(fieldCodes: Record<string, ErrorCode> = {}) {
  return (result: ValidationResult): void => {
    if (result.success) return
    const issues = result.error.issues
    const code = fieldCodes[String(issues[0]?.path[0] ?? '')] ?? 'invalid_request'
    throw new ApiError(400, code, issues.slice(0, 3).map(describe).join('; ') || 'invalid request')
  }
}

/** A resource sub-app: OpenAPI-described routes validated by the hook above. */
export function resourceApp(fieldCodes: Record<string, ErrorCode> = {}): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook(fieldCodes) })
}

/**
 * For routes whose JSON body is optional: a request that says JSON but sends nothing (many clients set the header
 * on every call) counts as one without a body, as it did before the body existed, instead of "not valid JSON".
 */
export const emptyBodyIsNone = createMiddleware<AppEnv>(async function emptyBodyIsNone(c, next) {
  if (c.req.header('content-type') !== undefined) {
    const text = c.req.raw.body ? await c.req.raw.clone().text() : ''
    if (text.trim() === '') {
      const headers = new Headers(c.req.raw.headers)
      headers.delete('content-type')
      c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers, signal: c.req.raw.signal })
    }
  }
  await next()
})
