/**
 * JSON Schema → fast-check arbitraries, for the subset the OpenAPI document and the MCP tool table use (type, enum,
 * const, anyOf/oneOf, properties/required/additionalProperties, items, lengths, bounds, pattern, format). Three
 * kinds: values the schema accepts, values on and just past its boundaries, and hostile values (wrong types, huge
 * strings and numbers, unicode edge cases, missing and extra fields).
 */
import fc from 'fast-check'

export type Schema = { [key: string]: unknown }

export type SchemaContext = {
  /** Follows a `$ref` into the document's components (identity for inlined schemas). */
  resolve: (schema: Schema) => Schema
  /** What a `format: uri` field gets when valid: addresses the test controls, so nothing reaches the internet. */
  uris: readonly string[]
  /** Real values by field name (ids of the test tenant), offered beside what the schema alone would generate. */
  known: Record<string, readonly unknown[]>
  /** Keywords laid over a field's schema by name, where a valid value would cost the suite time (a long wait). */
  narrow?: Record<string, Schema>
}

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined)

/** Lengths above this are left to the boundary and hostile kinds, which send them once rather than per run. */
const LONGEST_VALID = 80

/** Strings that break naive handling: lone surrogates, NUL, direction overrides, zero-width, BOM, combining marks. */
export const UNICODE_EDGES: readonly string[] = [
  '\uD800',
  '\uDFFF',
  'a\uDC00b\uD83D',
  '\u0000',
  'a\u0000b',
  '\u202Eevil\u202C',
  '\u200F\u05D0\u200E',
  '\u200B\u200D\u2060',
  '\uFEFF',
  '\uFFFE\uFFFF',
  'e\u0301\u0301\u0301',
  '👩‍👩‍👧‍👦🏳️‍🌈',
  '𝟘𝟙',
  '\u2028\u2029\u0085',
  '\r\n\t\v\f',
  'İı',
  '%00%2F..%2F',
  "'; DROP TABLE messages; --",
  '<script>alert(1)</script>',
  '\u0024{{7*7}}{{7*7}}',
  '../../etc/passwd',
  '__proto__',
]

/** Scalars of every JSON type, so a field gets each type it does not expect. */
const WRONG_TYPES: readonly unknown[] = [null, true, false, 0, -1, 1.5, '', 'null', 'true', '0', [], [null], {}, { '': '' }]

/** Numbers at the edges of what JSON, IEEE 754 and SQLite integers hold. */
export const EXTREME_NUMBERS: readonly number[] = [
  -0,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  2 ** 63,
  -(2 ** 63),
  2 ** 64,
  2 ** 31,
  0.1,
]

export const HUGE_STRINGS: readonly string[] = ['a'.repeat(100_000), '9'.repeat(400), '\u{1F600}'.repeat(5000), ' '.repeat(5000)]

/** Any string with code points from the whole range, plus the edge cases above. */
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom(...UNICODE_EDGES))

/** Anything JSON can carry, including deep nesting. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...WRONG_TYPES),
  fc.constantFrom(...EXTREME_NUMBERS),
  anyString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.nat(200).map((depth) => nested(depth))
)

function nested(depth: number): unknown {
  let v: unknown = 'x'
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v }
  return v
}

function types(s: Schema): string[] {
  if (typeof s.type === 'string') return [s.type]
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === 'string')
  if (isSchema(s.properties)) return ['object']
  return []
}

function alternatives(s: Schema): Schema[] | undefined {
  const list = s.anyOf ?? s.oneOf
  return Array.isArray(list) ? list.filter(isSchema) : undefined
}

function validString(s: Schema, ctx: SchemaContext): fc.Arbitrary<string> {
  const minLength = num(s.minLength) ?? 0
  const maxLength = Math.max(minLength, Math.min(num(s.maxLength) ?? LONGEST_VALID, LONGEST_VALID))
  const fits = (v: string) => v.length >= minLength && v.length <= (num(s.maxLength) ?? Infinity)
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter(fits)
  if (s.format === 'uri' || s.format === 'url') return fc.constantFrom(...ctx.uris).filter(fits)
  if (s.format === 'email') return fc.emailAddress().filter(fits)
  if (s.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
  return fc.string({ minLength, maxLength })
}

function validNumber(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const exclusiveMin = num(s.exclusiveMinimum)
  const exclusiveMax = num(s.exclusiveMaximum)
  const min = num(s.minimum) ?? (exclusiveMin === undefined ? -1_000_000 : exclusiveMin + (integer ? 1 : Number.EPSILON))
  const max = num(s.maximum) ?? (exclusiveMax === undefined ? 1_000_000 : exclusiveMax - (integer ? 1 : Number.EPSILON))
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
}

/** Values the schema accepts (a `pattern`, `format` or bound narrows them as the validator would). */
export function valid(schema: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const s = ctx.resolve(schema)
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]))
  if ('const' in s) return fc.constant(s.const)
  const alts = alternatives(s)
  if (alts) return fc.oneof(...alts.map((a) => valid(a, ctx)))
  const ts = types(s)
  if (ts.length === 0) return anyJson
  return fc.oneof(
    ...ts.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case 'string':
          return validString(s, ctx)
        case 'integer':
          return validNumber(s, true)
        case 'number':
          return validNumber(s, false)
        case 'boolean':
          return fc.boolean()
        case 'null':
          return fc.constant(null)
        case 'array': {
          const item = isSchema(s.items) ? valid(s.items, ctx) : anyJson
          const minLength = num(s.minItems) ?? 0
          return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(num(s.maxItems) ?? 4, 4)) })
        }
        default:
          return validObject(s, ctx)
      }
    })
  )
}

function properties(s: Schema): [string, Schema][] {
  return isSchema(s.properties) ? Object.entries(s.properties).filter((e): e is [string, Schema] => isSchema(e[1])) : []
}

function requiredOf(s: Schema): string[] {
  return Array.isArray(s.required) ? s.required.filter((k): k is string => typeof k === 'string') : []
}

/** A field's value: one of the tenant's real ids for its name, or what its (narrowed) schema generates. */
export function field(name: string, schema: Schema, ctx: SchemaContext, kind: typeof valid = valid): fc.Arbitrary<unknown> {
  const narrowed = ctx.narrow?.[name] ? { ...ctx.resolve(schema), ...ctx.narrow[name] } : schema
  const real = ctx.known[name]
  const arb = kind(narrowed, ctx)
  return real?.length ? fc.oneof(fc.constantFrom(...real), arb) : arb
}

function validObject(s: Schema, ctx: SchemaContext): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(properties(s).map(([k, v]) => [k, field(k, v, ctx)]))
  return fc.record(model, { requiredKeys: requiredOf(s).filter((k) => k in model) })
}

/** Values on and just past the schema's edges: lengths, bounds, item counts, a non-integer for an integer. */
export function boundary(schema: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const s = ctx.resolve(schema)
  const ts = types(s)
  const picks: unknown[] = []
  if (ts.includes('string')) {
    const lengths = [0, 1, num(s.minLength), num(s.maxLength)].filter((n): n is number => n !== undefined)
    for (const n of lengths) picks.push('x'.repeat(n), 'x'.repeat(n + 1), 'x'.repeat(Math.max(0, n - 1)), '\u{1F600}'.repeat(n))
    picks.push(' ', '  x  ')
  }
  if (ts.includes('integer') || ts.includes('number')) {
    for (const n of [num(s.minimum), num(s.maximum), num(s.exclusiveMinimum), num(s.exclusiveMaximum), 0]) {
      if (n !== undefined) picks.push(n, n - 1, n + 1, n + 0.5)
    }
  }
  if (ts.includes('array')) {
    const item = isSchema(s.items) ? valid(s.items, ctx) : fc.constant(null)
    const counts = [0, num(s.minItems), num(s.maxItems)].filter((n): n is number => n !== undefined)
    return fc.oneof(fc.constantFrom(...(picks.length ? picks : [[]])), ...counts.map((n) => fc.array(item, { minLength: n + 1, maxLength: n + 1 })))
  }
  if (Array.isArray(s.enum)) picks.push(...s.enum.filter((v): v is string => typeof v === 'string').flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v}\u0000`]))
  return picks.length ? fc.constantFrom(...picks) : anyJson
}

/** Values no schema of this kind accepts: every other JSON type, huge strings and numbers, unicode edge cases. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...UNICODE_EDGES) }
)

/**
 * An object schema's value with one thing wrong: a required member missing, a member replaced by a boundary or
 * hostile value, or a member added the schema does not name.
 */
function mutatedObject(s: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const props = properties(s)
  const base = validObject(s, ctx)
  const options: fc.Arbitrary<unknown>[] = [
    fc.tuple(base, fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', '', 'extra'), anyString), anyJson).map(([o, k, v]) => {
      const copy: Record<string, unknown> = { ...o }
      Object.defineProperty(copy, k, { value: v, enumerable: true, configurable: true, writable: true })
      return copy
    }),
  ]
  const required = requiredOf(s)
  if (required.length) {
    options.push(fc.tuple(base, fc.constantFrom(...required)).map(([o, k]) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== k))))
  }
  if (props.length) {
    const member = fc.constantFrom(...props).chain(([k, v]) => fc.tuple(fc.constant(k), fc.oneof(field(k, v, ctx, boundary), hostile, field(k, v, ctx, input))))
    options.push(fc.tuple(base, member).map(([o, [k, v]]) => ({ ...o, [k]: v })))
  }
  return fc.oneof(...options)
}

/** The mix a fuzz run sends for one schema: mostly valid, then boundary, broken objects and hostile values. */
export function input(schema: Schema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  const s = ctx.resolve(schema)
  const object = types(s).includes('object') && !Array.isArray(s.enum)
  return fc.oneof(
    { weight: 4, arbitrary: valid(s, ctx) },
    { weight: 2, arbitrary: boundary(s, ctx) },
    ...(object ? [{ weight: 4, arbitrary: mutatedObject(s, ctx) }] : []),
    { weight: 1, arbitrary: hostile }
  )
}
