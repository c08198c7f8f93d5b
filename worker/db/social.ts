/** Page-inbox queries (spec 4.6): the tenant's app, its connect flows and its connected pages. */
import { and, desc, eq, isNull, or } from 'drizzle-orm'
import { socialApps, socialFlows, socialPages } from '../../schema/d1'
import type { SealedAt } from '../lib/sealed'
import type { Db } from './client'

export type SocialAppRow = typeof socialApps.$inferSelect
export type SocialFlowRow = typeof socialFlows.$inferSelect
export type SocialPageRow = typeof socialPages.$inferSelect

export function getSocialApp(db: Db, tenantId: string): Promise<SocialAppRow | undefined> {
  return db.select().from(socialApps).where(eq(socialApps.tenantId, tenantId)).get()
}

export function socialAppByWebhook(db: Db, webhookId: string): Promise<SocialAppRow | undefined> {
  return db.select().from(socialApps).where(eq(socialApps.webhookId, webhookId)).get()
}

/** Saves the app; a second save replaces the app's fields but keeps its webhook id and verify token (already pasted). */
export function upsertSocialApp(db: Db, row: SocialAppRow) {
  return db
    .insert(socialApps)
    .values(row)
    .onConflictDoUpdate({ target: socialApps.tenantId, set: { appId: row.appId, configId: row.configId, secret: row.secret, updatedAt: row.updatedAt } })
    .returning()
}

export function insertSocialFlow(db: Db, row: typeof socialFlows.$inferInsert) {
  return db.insert(socialFlows).values(row)
}

export function latestSocialFlow(db: Db, tenantId: string): Promise<SocialFlowRow | undefined> {
  return db.select().from(socialFlows).where(eq(socialFlows.tenantId, tenantId)).orderBy(desc(socialFlows.createdAt), desc(socialFlows.id)).limit(1).get()
}

/**
 * Spends an OAuth state: answers the flow only for the first caller (the update is conditional on the state not
 * being used yet), so a replayed callback finds nothing.
 */
export async function spendSocialState(db: Db, stateHash: string, now: number): Promise<SocialFlowRow | undefined> {
  const [row] = await db
    .update(socialFlows)
    .set({ stateUsedAt: now, updatedAt: now })
    .where(and(eq(socialFlows.stateHash, stateHash), isNull(socialFlows.stateUsedAt)))
    .returning()
  return row
}

export function socialFlowByState(db: Db, stateHash: string): Promise<SocialFlowRow | undefined> {
  return db.select().from(socialFlows).where(eq(socialFlows.stateHash, stateHash)).get()
}

export function getSocialFlow(db: Db, tenantId: string, id: string): Promise<SocialFlowRow | undefined> {
  return db
    .select()
    .from(socialFlows)
    .where(and(eq(socialFlows.tenantId, tenantId), eq(socialFlows.id, id)))
    .get()
}

export type FlowPatch = Partial<Pick<SocialFlowRow, 'status' | 'reason' | 'pages' | 'accountId' | 'expiresAt'>>

export function updateSocialFlow(db: Db, id: string, patch: FlowPatch, now: number) {
  return db
    .update(socialFlows)
    .set({ ...patch, updatedAt: now })
    .where(eq(socialFlows.id, id))
}

export function insertSocialPage(db: Db, row: SocialPageRow) {
  return db
    .insert(socialPages)
    .values(row)
    .onConflictDoUpdate({
      target: [socialPages.tenantId, socialPages.accountId],
      set: { pageName: row.pageName, instagramId: row.instagramId, instagramUsername: row.instagramUsername, token: row.token, updatedAt: row.updatedAt },
    })
}

export function getSocialPage(db: Db, tenantId: string, accountId: string): Promise<SocialPageRow | undefined> {
  return db
    .select()
    .from(socialPages)
    .where(and(eq(socialPages.tenantId, tenantId), eq(socialPages.accountId, accountId)))
    .get()
}

export function listSocialPages(db: Db, tenantId: string): Promise<SocialPageRow[]> {
  return db.select().from(socialPages).where(eq(socialPages.tenantId, tenantId)).orderBy(socialPages.createdAt)
}

/** The connected page a webhook entry belongs to: `entry.id` is the page id (Messenger) or the Instagram id. */
export function socialPageByOwner(db: Db, tenantId: string, ownerId: string): Promise<SocialPageRow | undefined> {
  return db
    .select()
    .from(socialPages)
    .where(and(eq(socialPages.tenantId, tenantId), or(eq(socialPages.pageId, ownerId), eq(socialPages.instagramId, ownerId))))
    .get()
}

export function deleteSocialPage(db: Db, tenantId: string, accountId: string) {
  return db.delete(socialPages).where(and(eq(socialPages.tenantId, tenantId), eq(socialPages.accountId, accountId)))
}

/** Where each sealed social value lives (lib/sealed.ts associated data): it opens only on its own row. */
export const socialSealedAt = {
  appSecret: (tenantId: string): SealedAt => ({ column: 'social_apps.secret', tenantId, rowId: tenantId }),
  flowPages: (tenantId: string, flowId: string): SealedAt => ({ column: 'social_flows.pages', tenantId, rowId: flowId }),
  pageToken: (tenantId: string, accountId: string): SealedAt => ({ column: 'social_pages.token', tenantId, rowId: accountId }),
}
