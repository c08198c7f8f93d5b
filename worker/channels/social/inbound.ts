/**
 * Signed webhook deliveries of the page inbox (upstreams 5.2, 5.3) turned into the service's records: a person's
 * message on the page or on the linked Instagram account lands as an inbound message of the page's `social`
 * account (contact: their page- or Instagram-scoped id, the surface they wrote on, their name when Graph gives it);
 * echoes of our own sends are skipped (the outbound row already exists); delivery and read callbacks move the
 * outbound statuses forward only; a person's reaction lands on the message it names (`message.reaction`, issue 25).
 */
import type { AccountRef } from '../../account/storage'
import { keyring } from '../../config'
import type { Db } from '../../db/client'
import { getContact } from '../../db/contacts'
import { unreadOutboundBefore } from '../../db/messages'
import { socialPageByOwner, socialSealedAt, type SocialPageRow } from '../../db/social'
import { unseal } from '../../lib/sealed'
import { contactIdFor } from '../../lib/ids'
import { accountStub } from '../../lib/objects'
import { GraphClient, GraphError } from './graph-client'
import type { Surface, WebhookEvent } from './payloads'

/** How a contact's surface is kept: `peer_id` holds `<surface>:<scoped id>`, which is what a reply is addressed by. */
export function peerIdFor(surface: Surface, scopedId: string): string {
  return `${surface}:${scopedId}`
}

export function surfaceOf(peerId: string | null | undefined): Surface {
  return peerId?.startsWith('instagram:') ? 'instagram' : 'page'
}

/** `queued`: messages whose attachments are being fetched into the media store; they are stored right after. */
export type WebhookTally = { stored: number; queued: number; duplicates: number; receipts: number; reactions: number; ignored: number }

export async function applyWebhookEvents(
  env: Env,
  db: Db,
  tenantId: string,
  events: WebhookEvent[],
  origin: string,
  graph = new GraphClient(env)
): Promise<WebhookTally> {
  const tally: WebhookTally = { stored: 0, queued: 0, duplicates: 0, receipts: 0, reactions: 0, ignored: 0 }
  const pages = new Map<string, SocialPageRow | undefined>()
  const pageFor = async (ownerId: string) => {
    if (!pages.has(ownerId)) pages.set(ownerId, await socialPageByOwner(db, tenantId, ownerId))
    return pages.get(ownerId)
  }
  for (const event of events) {
    if (event.kind === 'other' || event.kind === 'echo') {
      tally.ignored++
      continue
    }
    const page = await pageFor(event.ownerId)
    if (!page) {
      tally.ignored++
      continue
    }
    const ref: AccountRef = { tenantId, accountId: page.accountId, channel: 'social' }
    const contactId = await contactIdFor(tenantId, page.accountId, { kind: 'social', value: event.senderId })
    if (event.kind === 'message') {
      const known = await getContact(db, tenantId, contactId)
      const name = known?.name ?? (await profileName(env, graph, page, event.surface, event.senderId))
      // Attachments are fetched into the media store after Graph has its answer (account/inbound-queue.ts).
      const outcome = await accountStub(env, tenantId, page.accountId).providerInbound(ref, {
        contact: {
          id: contactId,
          tenantId,
          accountId: page.accountId,
          channel: 'social',
          socialId: event.senderId,
          peerId: peerIdFor(event.surface, event.senderId),
          name,
        },
        text: event.text,
        upstreamId: event.mid,
        attachments: event.attachments,
        origin,
        optOut: null,
        replyTo: event.replyTo,
      })
      if (outcome.queued) {
        if (outcome.duplicate) tally.duplicates++
        else tally.queued++
      } else if (outcome.stored && outcome.duplicate) tally.duplicates++
      else if (outcome.stored) tally.stored++
      else tally.ignored++
      continue
    }
    if (event.kind === 'reaction') {
      const applied = await accountStub(env, tenantId, page.accountId).reaction(ref, { upstreamId: event.mid, emoji: event.emoji, at: event.at ?? Date.now() })
      if (applied !== null) tally.reactions++
      else tally.ignored++
      continue
    }
    const mids =
      event.kind === 'delivered'
        ? event.mids
        : event.mid !== null
          ? [event.mid]
          : event.watermark !== null
            ? await unreadOutboundBefore(db, tenantId, page.accountId, contactId, event.watermark)
            : []
    const status = event.kind === 'delivered' ? ('delivered' as const) : ('read' as const)
    // One call for all of them: the account matches them in one read and moves them in one D1 batch.
    if (mids.length > 0) {
      const applied = await accountStub(env, tenantId, page.accountId).receiptsFor(
        ref,
        mids.map((upstreamId) => ({ upstreamId, status }))
      )
      tally.reactions += applied.length
    }
  }
  return tally
}

/**
 * The person's display name from the User Profile API (page: PSID → name; Instagram: IGSID → name or username).
 * Best effort: a person who hides it, or a Graph hiccup, leaves the name unknown (spec: "when available").
 */
async function profileName(env: Env, graph: GraphClient, page: SocialPageRow, surface: Surface, scopedId: string): Promise<string | null> {
  try {
    const token = await unseal(keyring(env), socialSealedAt.pageToken(page.tenantId, page.accountId), page.token)
    return await graph.profileName(scopedId, token, surface)
  } catch (err) {
    if (err instanceof GraphError) return null
    throw err
  }
}
