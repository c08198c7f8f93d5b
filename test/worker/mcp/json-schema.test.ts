// zod → the JSON Schema of tools/list: shared shapes inlined, OpenAPI-only metadata dropped, lone allOf unwrapped.
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { inputJsonSchema } from '../../../worker/mcp/json-schema'

const Shared = z.object({ event: z.enum(['a', 'b']).optional() }).meta({ id: 'SharedShape', description: 'A shared body' })

describe('inputJsonSchema', () => {
  it('inlines a shared shape instead of referring to it', () => {
    const schema = inputJsonSchema(z.strictObject({ body: Shared }))
    expect(JSON.stringify(schema)).not.toContain('$ref')
    expect(schema.properties).toEqual({
      body: { type: 'object', description: 'A shared body', properties: { event: { type: 'string', enum: ['a', 'b'] } } },
    })
  })

  it('unwraps the allOf zod puts around an optional shared shape', () => {
    const schema = inputJsonSchema(z.strictObject({ body: Shared.optional() }))
    expect(schema.properties).toEqual({
      body: { type: 'object', description: 'A shared body', properties: { event: { type: 'string', enum: ['a', 'b'] } } },
    })
    expect(schema.required).toBeUndefined()
  })

  it('keeps an allOf of two schemas, and one whose sibling keywords constrain (merging could change what it accepts)', () => {
    const both = inputJsonSchema(z.strictObject({ body: Shared.and(z.object({ n: z.number() })) }))
    expect((both.properties as Record<string, { allOf?: unknown[] }>).body?.allOf).toHaveLength(2)
    const constrained = inputJsonSchema(z.strictObject({ body: Shared.optional().meta({ description: 'Other', properties: { event: { const: 'a' } } }) }))
    expect((constrained.properties as Record<string, { allOf?: unknown[] }>).body?.allOf).toHaveLength(1)
  })

  it('drops the OpenAPI param metadata of a path parameter and turns example into examples', () => {
    const id = z
      .string()
      .min(1)
      .meta({ param: { name: 'webhookId', in: 'path' }, description: 'The id', example: 'crm-sync' })
    const schema = inputJsonSchema(z.strictObject({ webhookId: id, param: z.string() }))
    expect(schema.properties).toEqual({
      webhookId: { type: 'string', minLength: 1, description: 'The id', examples: ['crm-sync'] },
      // A field that happens to be named param is a field, not metadata.
      param: { type: 'string' },
    })
    expect(schema.additionalProperties).toBe(false)
  })
})
