/**
 * Issue 14 §5 beyond /v1: the routes outside the OpenAPI document (admin API, relay endpoint, provider callbacks,
 * hosted connect and approval pages, signed media links), taken from the app's route table and sent hostile path
 * segments, queries, bodies and content types, never answer a 5xx or show a stack trace or internal name, and their
 * JSON errors keep the status family's shape.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { app } from '../../../worker/app'
import { CHANNELS } from '../../../worker/channels/registry'
import { ADMIN_TOKEN, call, ORIGIN } from '../helpers'
import { deepTenant, type DeepTenant } from './deep-tenant'
import { leaks, shapeProblems } from './judge'
import { asText, CONTENT_TYPES, describeRequest, encodeSegment, RAW_BODIES, RAW_SEGMENTS, type FuzzRequest } from './operations'
import { hostile, UNICODE_EDGES } from './schema-arbitrary'
import { fuzz, printTallies, tally } from './settings'

/**
 * Every concrete route outside /v1 and /mcp (those have their own suites), once per method and path, and the
 * channels' public routes under /v1 (provider callbacks, hosted pages), which take no API key.
 */
const ROUTES = [
  ...new Map(
    [...app.routes.filter((r) => !r.path.startsWith('/v1') && !r.path.startsWith('/mcp')), ...CHANNELS.flatMap((c) => c.publicRoutes?.routes ?? [])]
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => [`${r.method} ${r.path}`, r] as const)
  ).values(),
]

let tenant: DeepTenant

beforeAll(async () => {
  tenant = await deepTenant()
}, 60_000)

afterAll(() => printTallies('Routes outside /v1: statuses answered'))

function requestArbitrary(method: string, template: string): fc.Arbitrary<FuzzRequest> {
  const names = [...template.matchAll(/:(\w+)(\{[^}]*\})?/g)].map((m) => m[0])
  const segment = fc.oneof(
    fc.constantFrom(tenant.t.tenantId, ...(tenant.known.phoneNumber as string[]), ...(tenant.known.id as string[]), 'custom').map(encodeSegment),
    fc.oneof(hostile, fc.constantFrom(...UNICODE_EDGES)).map((v) => encodeSegment(asText(v))),
    fc.constantFrom(...RAW_SEGMENTS)
  )
  const query = fc.option(
    fc.array(
      fc.tuple(
        fc.constantFrom('token', 'sig', 'exp', 'code', 'state', 'hub.mode', 'hub.verify_token', 'hub.challenge', 'x'),
        fc.oneof(hostile, fc.string()).map(asText)
      ),
      { maxLength: 4 }
    ),
    { nil: undefined }
  )
  const auth = fc.constantFrom<Record<string, string>>(
    {},
    { Authorization: `Bearer ${ADMIN_TOKEN}` },
    { Authorization: `Bearer ${tenant.t.key}` },
    { 'X-Twilio-Signature': 'AAAA' },
    { 'X-Hub-Signature-256': 'sha256=00' }
  )
  type Body = { body?: string | Uint8Array; contentType?: string }
  const none: fc.Arbitrary<Body> = fc.constant({})
  const body: fc.Arbitrary<Body> =
    method === 'GET' || method === 'HEAD'
      ? none
      : fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).map((v): Body => ({ body: JSON.stringify(v), contentType: 'application/json' })),
          fc.constantFrom(...RAW_BODIES).map((b): Body => ({ body: b, contentType: 'application/json' })),
          fc
            .tuple(fc.constantFrom(...RAW_BODIES, 'Body=hi&From=%2B1555&To=%2B1555'), fc.constantFrom(...CONTENT_TYPES))
            .map(([b, contentType]): Body => ({ body: b, contentType })),
          none
        )
  return fc.tuple(fc.array(segment, { minLength: names.length, maxLength: names.length }), query, auth, body).map(([segs, q, headers, b]) => {
    let path = template
    for (const [i, name] of names.entries()) path = path.replace(name, segs[i]!)
    const search = q?.length ? `?${new URLSearchParams(q)}` : ''
    const all: Record<string, string> = { ...headers }
    if (b.contentType !== undefined) all['Content-Type'] = b.contentType
    return { method, url: path + search, headers: all, body: b.body, mangled: true }
  })
}

describe('every route outside /v1, fuzzed', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path} never answers a 5xx`, async () => {
      await fuzz(
        `${route.method} ${route.path}`,
        requestArbitrary(route.method, route.path),
        async (req) => {
          const res = await call(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual' })
          const text = await res.text()
          tally(`${route.method} ${route.path}`, res.status)
          const problems: string[] = []
          if (res.status >= 500) problems.push(`answered ${res.status}`)
          const leaked = leaks(text)
          if (leaked) problems.push(`the body shows "${leaked}"`)
          // Pages answer HTML; JSON errors keep their family's shape.
          if (res.status >= 400 && text !== '' && res.headers.get('content-type')?.startsWith('application/json')) {
            problems.push(...shapeProblems(new URL(req.url, ORIGIN).pathname, res.status, JSON.parse(text)))
          }
          if (problems.length) throw new Error(`${describeRequest(req)}\n${problems.join('\n')}\n  body: ${text.slice(0, 400)}`)
        },
        0.5
      )
    })
  }
})
