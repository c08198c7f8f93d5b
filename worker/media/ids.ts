/**
 * Media ids and bucket keys. An id is derived from (tenant, account, upstream message id), so a relay that uploads the
 * same message again after a crash writes the same object and the message that follows names the same media.
 */
import { sha256Hex } from '../lib/crypto'

export const MEDIA_ID = /^med_[0-9a-f]{24}$/

export async function mediaIdFor(tenantId: string, accountId: string, upstreamId: string): Promise<string> {
  return `med_${(await sha256Hex(`${tenantId}\u0000${accountId}\u0000${upstreamId}`)).slice(0, 24)}`
}

/** Keyed by tenant first, then account: account removal deletes one prefix. */
export function mediaKey(tenantId: string, accountId: string, mediaId: string): string {
  return `media/${encodeURIComponent(tenantId)}/${encodeURIComponent(accountId)}/${mediaId}`
}

export function accountPrefix(tenantId: string, accountId: string): string {
  return `media/${encodeURIComponent(tenantId)}/${encodeURIComponent(accountId)}/`
}

/** The unsigned address of an item; links hand it out with a signature (links.ts). */
export function mediaPath(mediaId: string): string {
  return `/media/${mediaId}`
}
