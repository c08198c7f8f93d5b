/**
 * The REST operations of the OpenAPI document the Worker serves, and fast-check arbitraries of requests to each:
 * path and query parameters and JSON bodies from their schemas (schema-arbitrary.ts), and requests broken at the
 * HTTP level: path segments with encodings (%2F, %00, ../, malformed %), malformed and oversized bodies, invalid
 * UTF-8, wrong content types, repeated and unknown query parameters.
 */
import fc from 'fast-check'
import { MAX_BODY_BYTES } from '../../../worker/app'
import { EXTREME_NUMBERS, field, input, UNICODE_EDGES, type Schema, type SchemaContext } from './schema-arbitrary'

type Param = { name: string; in: string; required: boolean; schema: Schema }

export type Operation = {
  /** `POST /messages/{id}/approve`: method and the document's path template. */
  name: string
  method: string
  path: string
  params: Param[]
  body?: { schema: Schema; required: boolean }
  statuses: Set<number>
  /** Statuses the operation documents as an HTML page (a hosted page a person opens shows its errors as a page). */
  htmlStatuses: Set<number>
}

export type FuzzRequest = {
  method: string
  /** Relative to the origin, exactly as sent (raw segments stay raw). */
  url: string
  headers: Record<string, string>
  body?: string | Uint8Array
  /** A path segment was sent raw (not encoded): another route, or none, may answer. */
  mangled: boolean
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function operationsOf(doc: unknown): Operation[] {
  const paths = isObject(doc) && isObject(doc.paths) ? doc.paths : {}
  const ops: Operation[] = []
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const op = item[method]
      if (!isObject(op)) continue
      const params = (Array.isArray(op.parameters) ? op.parameters : []).filter(isObject).map((p) => ({
        name: String(p.name),
        in: String(p.in),
        required: p.required === true,
        schema: isObject(p.schema) ? p.schema : {},
      }))
      const rb = isObject(op.requestBody) ? op.requestBody : undefined
      const schema = rb && isObject(rb.content) && isObject(rb.content['application/json']) ? rb.content['application/json'].schema : undefined
      ops.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        params,
        body: isObject(schema) ? { schema, required: rb?.required === true } : undefined,
        statuses: new Set(Object.keys(isObject(op.responses) ? op.responses : {}).map(Number)),
        htmlStatuses: new Set(
          Object.entries(isObject(op.responses) ? op.responses : {})
            .filter(([, r]) => isObject(r) && isObject(r.content) && 'text/html' in r.content)
            .map(([status]) => Number(status))
        ),
      })
    }
  }
  return ops
}

/** `$ref: #/components/schemas/X` → X, for the document's schemas. */
export function resolverFor(doc: unknown): SchemaContext['resolve'] {
  const schemas = isObject(doc) && isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {}
  return function resolve(schema: Schema): Schema {
    const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined
    const target = ref === undefined ? undefined : schemas[ref]
    return isObject(target) ? resolve(target) : schema
  }
}

/** A value as a query or path parameter carries it. */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : (JSON.stringify(v) ?? '')
}

/** Path segments sent as they are: traversal, encoded separators and NUL, malformed escapes, very long ones. */
export const RAW_SEGMENTS = [
  '%2F',
  'a%2Fb',
  '%00',
  '%2500',
  '..',
  '../',
  '..%2F..%2Fadmin',
  '%2E%2E',
  '.',
  '%',
  '%zz',
  '%C0%AE%C0%AE',
  '%ED%A0%80',
  '%FF%FE',
  '%E2%80%AE',
  '+15551234567',
  '%2B15551234567',
  '%20',
  ';x=1',
  '?x=1',
  '#frag',
  'a'.repeat(10_000),
  '%41'.repeat(3000),
]

/** Bodies no JSON parser should accept, or should accept only with care (nesting, duplicate and prototype keys). */
export const RAW_BODIES: readonly (string | Uint8Array)[] = [
  '',
  ' ',
  '{',
  '{"a":',
  'nul',
  'null',
  '[]',
  '"text"',
  '123',
  '{"a":1}trailing',
  '\uFEFF{}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
  '{"text":"a","text":"b"}',
  '1e999',
  '{"text":"\\ud800"}',
  '{"a":"\\u0000"}',
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
  'a=b&c=d',
  '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n',
  new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]),
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  'x'.repeat(MAX_BODY_BYTES + 1),
]

export const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/json;;;',
  '',
]

/** Keys that are no key: empty, overlong, of the right prefix and the wrong body. */
const BAD_KEYS = ['', 'svc_live_', `svc_live_${'a'.repeat(5000)}`, 'svc_live_%00', "svc_live_' OR '1'='1", 'Bearer']

function paramValue(p: Param, ctx: SchemaContext): fc.Arbitrary<string> {
  return field(p.name, p.schema, ctx, input).map(asText)
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) becomes the bytes a raw client would send for
 * it (its WTF-8 form), so such values still reach the server.
 */
export function encodeSegment(v: string): string {
  try {
    return encodeURIComponent(v)
  } catch {
    return [...v]
      .map((ch) => {
        const unit = ch.charCodeAt(0)
        if (ch.length > 1 || unit < 0xd800 || unit > 0xdfff) return encodeURIComponent(ch)
        return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
      })
      .join('')
  }
}

function pathArbitrary(op: Operation, ctx: SchemaContext): fc.Arbitrary<{ path: string; mangled: boolean }> {
  const segments = op.params
    .filter((p) => p.in === 'path')
    .map((p) =>
      fc
        .oneof(
          // An empty segment changes the route (`/webhooks/` is the list), so it counts as mangled.
          { weight: 6, arbitrary: paramValue(p, ctx).map((v) => ({ text: encodeSegment(v), mangled: v === '' })) },
          { weight: 1, arbitrary: fc.constantFrom(...UNICODE_EDGES).map((v) => ({ text: encodeSegment(v), mangled: false })) },
          { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((v) => ({ text: v, mangled: true })) }
        )
        .map((seg) => [p.name, seg] as const)
    )
  return fc.tuple(...segments).map((list) => {
    let path = op.path
    for (const [name, seg] of list) path = path.replace(`{${name}}`, seg.text)
    return { path, mangled: list.some(([, seg]) => seg.mangled) }
  })
}

function queryArbitrary(op: Operation, ctx: SchemaContext): fc.Arbitrary<string> {
  const params = op.params.filter((p) => p.in === 'query')
  const pairs = params.map((p) => {
    const value = paramValue(p, ctx).map((v) => [[p.name, v]])
    // A parameter given twice, or with an empty value.
    const odd = fc.tuple(paramValue(p, ctx), paramValue(p, ctx)).map(([a, b]) => [
      [p.name, a],
      [p.name, b],
    ])
    return fc.oneof({ weight: 6, arbitrary: value }, { weight: 1, arbitrary: odd }, { weight: 1, arbitrary: fc.constant([[p.name, '']]) })
  })
  // A narrowed parameter is always sent: its default (a 25 s wait) would undo the narrowing.
  const present = pairs.map((arb, i) => (params[i]!.required || ctx.narrow?.[params[i]!.name] ? arb : fc.option(arb, { nil: undefined, freq: 3 })))
  const extra = fc.option(
    fc.tuple(
      fc.constantFrom('extra', 'limit', '__proto__', 'apiKey', ''),
      fc.oneof(fc.constantFrom(...UNICODE_EDGES), fc.constantFrom(...EXTREME_NUMBERS).map(String))
    ),
    { nil: undefined, freq: 4 }
  )
  return fc.tuple(fc.tuple(...present), extra).map(([list, more]) => {
    const q = new URLSearchParams()
    for (const entry of list) for (const [k, v] of entry ?? []) q.append(k!, v!)
    if (more) q.append(more[0], more[1])
    return q.size ? `?${q}` : ''
  })
}

type Body = { body?: string | Uint8Array; contentType?: string }

function bodyArbitrary(op: Operation, ctx: SchemaContext): fc.Arbitrary<Body> {
  // fetch refuses a body on GET and HEAD before anything is sent.
  if (op.method === 'GET' || op.method === 'HEAD') return fc.constant({})
  const json = op.body ? input(op.body.schema, ctx).map((v) => JSON.stringify(v) ?? '') : fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))
  return fc.oneof(
    { weight: op.body ? 12 : 1, arbitrary: json.map((body) => ({ body, contentType: 'application/json' })) },
    { weight: op.body ? 1 : 8, arbitrary: fc.constant({}) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES).map((body) => ({ body, contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(json, fc.constantFrom(...CONTENT_TYPES)).map(([body, contentType]) => ({ body, contentType })) }
  )
}

/** Requests to one operation, with the tenant's key (now and then a broken one). */
export function requestArbitrary(op: Operation, ctx: SchemaContext, key: string): fc.Arbitrary<FuzzRequest> {
  const auth = fc.oneof({ weight: 30, arbitrary: fc.constant(key) }, { weight: 1, arbitrary: fc.constantFrom(...BAD_KEYS) })
  return fc.tuple(pathArbitrary(op, ctx), queryArbitrary(op, ctx), bodyArbitrary(op, ctx), auth).map(([path, query, body, apiKey]) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}` }
    if (body.contentType !== undefined) headers['Content-Type'] = body.contentType
    return { method: op.method, url: `/v1${path.path}${query}`, headers, body: body.body, mangled: path.mangled }
  })
}

/** Shown with a failing case, so it can be replayed with curl. */
export function describeRequest(req: FuzzRequest): string {
  const body = req.body === undefined ? '' : typeof req.body === 'string' ? req.body : `bytes ${[...req.body].map((b) => b.toString(16)).join(' ')}`
  return `${req.method} ${req.url.slice(0, 300)}\n  headers: ${JSON.stringify(req.headers).slice(0, 300)}\n  body: ${JSON.stringify(body.slice(0, 300))}`
}
