/**
 * The one request validator. Every resource sub-app is created by `resourceApp()`, whose defaultHook turns a zod
 * failure anywhere into an ApiError(400) with a field-specific `error_code` and a readable message.
 */
import { OpenAPIHono } from '@hono/zod-openapi'
import type { z } from 'zod'
import type { AppEnv } from './env'
import { ApiError } from './errors'

type ValidationResult = { success: true } | { success: false; error: z.ZodError }

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.')
  return path ? `${path}: ${issue.message}` : issue.message
}

/** `fieldCodes` maps a top-level field (query parameter or body member) to the error_code its failures carry. */
export function validationHook(fieldCodes: Record<string, string> = {}) {
  return (result: ValidationResult): void => {
    if (result.success) return
    const issues = result.error.issues
    const code = fieldCodes[String(issues[0]?.path[0] ?? '')] ?? 'invalid_request'
    throw new ApiError(400, code, issues.slice(0, 3).map(describe).join('; ') || 'invalid request')
  }
}

/** A resource sub-app: OpenAPI-described routes validated by the hook above. */
export function resourceApp(fieldCodes: Record<string, string> = {}): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook(fieldCodes) })
}
