/**
 * `import_contacts` and friends (spec 4.3): the contacts the linked phone reports become the account's contacts,
 * with `ai_paused` (pause_ai_for_imported_contacts) and `private` (mark_imported_contacts_as_private) set on them.
 * With import_existing_chats, people the phone already has a chat with count as people who wrote first: replies to
 * them use no new-contact allowance and their loop guard starts as for a reply.
 */
import type { z } from 'zod'
import type { ImportedContact } from '../../../schema/frames'
import { contactIdsByPhone, upsertImportedContact } from '../../db/contacts'
import type { AccountContext } from '../context'
import { EMPTY_GUARD } from '../guards'
import type { SessionRecord } from './state'
import { contactSeedFor, peerAddresses } from './peers'
import type { AccountRef } from '../storage'

const STATEMENTS_PER_BATCH = 50

export async function importContacts(c: AccountContext, ref: AccountRef, record: SessionRecord, contacts: z.infer<typeof ImportedContact>[]): Promise<number> {
  if (!record.options.importContacts || contacts.length === 0) return 0
  const now = Date.now()
  const flags = { aiPaused: record.options.pauseAiForImportedContacts, private: record.options.markImportedContactsAsPrivate }
  const byPhone = await contactIdsByPhone(c.db, ref.tenantId, ref.accountId)
  const seeds = await Promise.all(
    contacts.map(async (p) => ({ seed: await contactSeedFor(ref, p, (phone) => byPhone.get(phone)), hasChat: p.hasChat, addresses: peerAddresses(p) }))
  )
  for (let i = 0; i < seeds.length; i += STATEMENTS_PER_BATCH) {
    const [first, ...rest] = seeds.slice(i, i + STATEMENTS_PER_BATCH).map(({ seed }) => upsertImportedContact(c.db, seed, flags, now))
    if (first) await c.db.batch([first, ...rest])
  }
  for (const { seed, addresses } of seeds) c.store.rememberPeerContact(addresses, seed.id)
  if (record.options.importExistingChats) {
    for (const { seed, hasChat } of seeds) {
      const guard = c.store.contactGuard(seed.id)
      if (hasChat && !guard?.hasInbound) c.store.setContactGuard(seed.id, { ...(guard ?? EMPTY_GUARD), hasInbound: true })
    }
  }
  return seeds.length
}
