/**
 * zod input schema → the JSON Schema (draft-07, as the MCP SDK emits) listed by tools/list. Tidied for MCP clients:
 * shared REST shapes carry OpenAPI ids that zod turns into `$ref`s, which several clients do not resolve, so they are
 * inlined; OpenAPI's `example` becomes the standard `examples`; zod's safe-integer bounds, which say nothing, and the
 * OpenAPI-only `param` metadata of path parameters go; an `allOf` around a single schema (what zod emits for an
 * optional shared shape) is unwrapped, because some clients do not combine schemas.
 */
import { z } from 'zod'

export type JsonObject = { [key: string]: unknown }

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Keywords that only annotate: merging them into a sibling schema cannot change what it accepts. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$comment'])

/** `{allOf: [X], description}` → X with the description, when nothing else sits beside the allOf. */
function unwrapAllOf(node: JsonObject): JsonObject {
  const { allOf, ...rest } = node
  if (!Array.isArray(allOf) || allOf.length !== 1 || !isObject(allOf[0])) return node
  const only = allOf[0]
  if (Object.keys(rest).some((k) => !ANNOTATIONS.has(k) || k in only)) return node
  return { ...only, ...rest }
}

function tidy(node: unknown, definitions: JsonObject, seen: readonly string[]): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n, definitions, seen))
  if (!isObject(node)) return node
  const ref = typeof node.$ref === 'string' ? /^#\/definitions\/(.+)$/.exec(node.$ref)?.[1] : undefined
  if (ref !== undefined) {
    // Input schemas are trees; a cycle would mean a recursive REST shape, which JSON-in-a-tool cannot inline.
    if (seen.includes(ref)) throw new Error(`recursive schema ${ref} cannot be inlined`)
    const { $ref: _ref, ...rest } = node
    return tidy({ ...(definitions[ref] as JsonObject), ...rest }, definitions, [...seen, ref])
  }
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'definitions' || key === 'param') continue
    if (key === 'example') {
      out.examples = [value]
      continue
    }
    if ((key === 'minimum' && value === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)) continue
    // Inside `properties` every key is a field name, never a keyword.
    out[key] = key === 'properties' && isObject(value) ? mapValues(value, (v) => tidy(v, definitions, seen)) : tidy(value, definitions, seen)
  }
  return unwrapAllOf(out)
}

function mapValues(obj: JsonObject, f: (v: unknown) => unknown): JsonObject {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, f(v)]))
}

/** The tools/list `inputSchema` of a tool: what an agent may send, as the REST validator will read it. */
export function inputJsonSchema(schema: z.ZodObject): { type: 'object'; [key: string]: unknown } {
  const raw = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as JsonObject
  const definitions = isObject(raw.definitions) ? raw.definitions : {}
  const tidied = tidy(raw, definitions, []) as JsonObject
  return { ...tidied, type: 'object' }
}
