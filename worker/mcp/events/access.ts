/**
 * Who may follow which events (docs/agent-safety.md applied to SEP-3415): any key reads message and account events,
 * but only of the accounts it may use (a key limited to accounts gets its accounts as the filter when it names
 * none, and is refused one it names outside them); `message.approval_required` carries links that approve a held
 * message, so only the owner's key sees it (approval means the owner: grant.ts isOwnerGrant). The subscription arguments are checked against the event's input schema.
 */
import { filterSchemaOf, OWNER_ONLY_EVENT, SUBSCRIBABLE_EVENTS, type EventFilter, type EventType } from '../../../schema/events'
import { isOwnerGrant, type KeyGrant } from '../../safety/grant'
import { eventNotFound, forbidden, invalidParams } from './errors'

/** One subscription as every mode serves it: the event, the arguments as given, and the filter applied. */
export type EventSubscription = {
  type: EventType
  /** The arguments as the client gave them (part of a webhook subscription's identity). */
  arguments: Record<string, unknown>
  /** What events must pass: the arguments, narrowed to the key's accounts; null when nothing narrows them. */
  filter: EventFilter | null
}

const isEventType = (s: string): s is EventType => (SUBSCRIBABLE_EVENTS as readonly string[]).includes(s)

export function eventVisible(grant: KeyGrant, type: EventType): boolean {
  return type !== OWNER_ONLY_EVENT || isOwnerGrant(grant)
}

export function visibleEvents(grant: KeyGrant): EventType[] {
  return SUBSCRIBABLE_EVENTS.filter((t) => eventVisible(grant, t))
}

export function resolveSubscription(grant: KeyGrant, name: string, given: Record<string, unknown> | undefined): EventSubscription {
  if (!isEventType(name)) throw eventNotFound(name, visibleEvents(grant))
  if (!eventVisible(grant, name)) throw forbidden(`${name} carries approval links; only the owner’s key may follow it`)
  const args = given ?? {}
  const parsed = filterSchemaOf(name).safeParse(args)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.length ? `arguments.${issue.path.join('.')}` : 'arguments'
    throw invalidParams(`Invalid params for ${name}: ${where}: ${issue?.message ?? 'does not fit the inputSchema'}`)
  }
  const filter: EventFilter = { ...parsed.data }
  if (grant.accounts !== null) {
    const outside = (filter.account_ids ?? []).filter((a) => !grant.accounts!.includes(a))
    if (outside.length) throw forbidden(`this key may not use ${outside.join(', ')}`)
    filter.account_ids ??= grant.accounts
  }
  return { type: name, arguments: args, filter: Object.keys(filter).length ? filter : null }
}
