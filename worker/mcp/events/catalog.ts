/**
 * `events/list` (SEP-3415): the gateway's events as one page, each with its delivery modes, the JSON Schema of its
 * subscription arguments and of its payload. Both schemas come from the zod shapes the webhooks use
 * (schema/events.ts), so an MCP client reads exactly what a webhook receiver is sent.
 */
import { z } from 'zod'
import { EVENT_DESCRIPTIONS, filterSchemaOf, payloadSchemaOf, type EventType } from '../../../schema/events'
import type { KeyGrant } from '../../safety/grant'
import { inputJsonSchema } from '../json-schema'
import { visibleEvents } from './access'

export type DeliveryMode = 'poll' | 'push' | 'webhook'

export type EventDescriptor = {
  name: EventType
  description: string
  delivery: DeliveryMode[]
  inputSchema: Record<string, unknown>
  payloadSchema: Record<string, unknown>
}

const descriptors = new Map<EventType, Omit<EventDescriptor, 'delivery'>>()

/** Rendered once per isolate: the shapes are static. */
function describe(type: EventType): Omit<EventDescriptor, 'delivery'> {
  let d = descriptors.get(type)
  if (!d) {
    d = {
      name: type,
      description: EVENT_DESCRIPTIONS[type],
      inputSchema: inputJsonSchema(filterSchemaOf(type)),
      // The webhook payload, with `event` pinned to this event's name.
      payloadSchema: inputJsonSchema(payloadSchemaOf(type).extend({ event: z.literal(type) })),
    }
    descriptors.set(type, d)
  }
  return d
}

/** Webhook delivery is offered only while the tenant has webhooks switched on (spec 4.8's switch). */
export function eventCatalog(grant: KeyGrant, webhooksEnabled: boolean): EventDescriptor[] {
  const delivery: DeliveryMode[] = webhooksEnabled ? ['poll', 'push', 'webhook'] : ['poll', 'push']
  return visibleEvents(grant).map((type) => ({ ...describe(type), delivery: [...delivery] }))
}
