/**
 * The RelayHubDO's own SQLite: one row per alpha/beta session the service should be running, with the relay process
 * (`instance`) holding its lease and the lease's fencing number. The sockets themselves live in the hibernation API
 * (links.ts); this table is what survives eviction and restarts.
 */
import type { RelayChannel } from '../../schema/frames'
import { migrateSqlite } from '../lib/do-migrations'

const MIGRATIONS: string[] = [
  `CREATE TABLE sessions (
     sid TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     account_id TEXT NOT NULL,
     channel TEXT NOT NULL,
     phone TEXT NOT NULL,
     link_method TEXT NOT NULL,
     force_new INTEGER NOT NULL,
     import_contacts INTEGER NOT NULL,
     relay_id TEXT,
     instance TEXT,
     fence INTEGER NOT NULL,
     lease_until INTEGER,
     unassigned_since INTEGER,
     was_connected INTEGER NOT NULL DEFAULT 0,
     lost_reported INTEGER NOT NULL DEFAULT 0,
     updated_at INTEGER NOT NULL
   );
   CREATE UNIQUE INDEX sessions_account ON sessions (tenant_id, account_id);
   CREATE INDEX sessions_instance ON sessions (instance);`,
  // The highest fence an account's removed session reached: a number added again continues from there (issue 14 §1),
  // so a relay still holding a session of its earlier life is always told apart from the new one.
  `CREATE TABLE fence_floors (
     tenant_id TEXT NOT NULL,
     account_id TEXT NOT NULL,
     fence INTEGER NOT NULL,
     PRIMARY KEY (tenant_id, account_id)
   );`,
  // The tenant's alpha_passkey_linking when the session was (re)started: it travels in every assign (docs/channels/alpha.md).
  'ALTER TABLE sessions ADD COLUMN passkey_linking INTEGER NOT NULL DEFAULT 0;',
]

export type SessionSpec = {
  sid: string
  tenantId: string
  accountId: string
  channel: RelayChannel
  phone: string
  linkMethod: 'qr' | 'pairing_code' | 'code'
  forceNew: boolean
  importContacts: boolean
  /** alpha: the relay may complete a passkey ceremony (tenant setting alpha_passkey_linking); absent: off. */
  passkeyLinking?: boolean
}

export type SessionRow = SessionSpec & {
  relayId: string | null
  /** The relay process holding the lease, or null while unassigned. */
  instance: string | null
  fence: number
  /** Set when the holder's link went away: the moment the lease lapses and the session may move. */
  leaseUntil: number | null
  unassignedSince: number | null
  /** The session reported `connected` at some point; losing its relay then has to be reported. */
  wasConnected: boolean
  lostReported: boolean
}

type Raw = {
  sid: string
  tenant_id: string
  account_id: string
  channel: string
  phone: string
  link_method: string
  force_new: number
  import_contacts: number
  passkey_linking: number
  relay_id: string | null
  instance: string | null
  fence: number
  lease_until: number | null
  unassigned_since: number | null
  was_connected: number
  lost_reported: number
}

function toRow(r: Raw): SessionRow {
  return {
    sid: r.sid,
    tenantId: r.tenant_id,
    accountId: r.account_id,
    channel: r.channel as RelayChannel,
    phone: r.phone,
    linkMethod: r.link_method === 'pairing_code' || r.link_method === 'code' ? r.link_method : 'qr',
    forceNew: r.force_new === 1,
    importContacts: r.import_contacts === 1,
    passkeyLinking: r.passkey_linking === 1,
    relayId: r.relay_id,
    instance: r.instance,
    fence: r.fence,
    leaseUntil: r.lease_until,
    unassignedSince: r.unassigned_since,
    wasConnected: r.was_connected === 1,
    lostReported: r.lost_reported === 1,
  }
}

export class HubStore {
  constructor(private readonly storage: DurableObjectStorage) {
    migrateSqlite(storage, MIGRATIONS)
  }

  private rows(query: string, ...bindings: unknown[]): SessionRow[] {
    return this.storage.sql
      .exec<Raw>(query, ...bindings)
      .toArray()
      .map(toRow)
  }

  bySid(sid: string): SessionRow | undefined {
    return this.rows('SELECT * FROM sessions WHERE sid = ?', sid)[0]
  }

  byAccount(tenantId: string, accountId: string): SessionRow | undefined {
    return this.rows('SELECT * FROM sessions WHERE tenant_id = ? AND account_id = ?', tenantId, accountId)[0]
  }

  heldBy(instance: string): SessionRow[] {
    return this.rows('SELECT * FROM sessions WHERE instance = ?', instance)
  }

  unassigned(): SessionRow[] {
    return this.rows('SELECT * FROM sessions WHERE instance IS NULL ORDER BY updated_at')
  }

  /** Sessions whose holder's link is gone and whose lease has lapsed by `now`. */
  lapsed(now: number): SessionRow[] {
    return this.rows('SELECT * FROM sessions WHERE lease_until IS NOT NULL AND lease_until <= ?', now)
  }

  all(): SessionRow[] {
    return this.rows('SELECT * FROM sessions ORDER BY tenant_id, account_id')
  }

  /** Sessions held per relay process, for least-loaded placement. */
  loads(): Map<string, number> {
    const out = new Map<string, number>()
    for (const r of this.storage.sql.exec<{ instance: string; n: number }>(
      'SELECT instance, count(*) AS n FROM sessions WHERE instance IS NOT NULL GROUP BY instance'
    )) {
      out.set(r.instance, r.n)
    }
    return out
  }

  /**
   * Creates or updates an account's session. The fence never goes down: it keeps counting across new links of the
   * same account, and across its removal (fence_floors), so a relay still holding an older link can always be told
   * apart.
   */
  upsert(spec: SessionSpec, now: number): SessionRow {
    this.storage.sql.exec(
      `INSERT INTO sessions (sid, tenant_id, account_id, channel, phone, link_method, force_new, import_contacts, passkey_linking, fence, unassigned_since, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce((SELECT fence FROM fence_floors WHERE tenant_id = ? AND account_id = ?), 0), ?, ?)
       ON CONFLICT (tenant_id, account_id) DO UPDATE SET sid = excluded.sid, channel = excluded.channel, phone = excluded.phone,
         link_method = excluded.link_method, force_new = excluded.force_new, import_contacts = excluded.import_contacts,
         passkey_linking = excluded.passkey_linking, updated_at = excluded.updated_at`,
      spec.sid,
      spec.tenantId,
      spec.accountId,
      spec.channel,
      spec.phone,
      spec.linkMethod,
      spec.forceNew ? 1 : 0,
      spec.importContacts ? 1 : 0,
      spec.passkeyLinking ? 1 : 0,
      spec.tenantId,
      spec.accountId,
      now,
      now
    )
    return this.byAccount(spec.tenantId, spec.accountId)!
  }

  /** Hands the session to a relay process under a new fencing number. */
  assign(sid: string, relayId: string, instance: string, now: number): SessionRow {
    this.storage.sql.exec(
      `UPDATE sessions SET relay_id = ?, instance = ?, fence = fence + 1, lease_until = NULL, unassigned_since = NULL,
         lost_reported = 0, updated_at = ? WHERE sid = ?`,
      relayId,
      instance,
      now,
      sid
    )
    return this.bySid(sid)!
  }

  /** The session has no relay; it waits for the next one that may take it. */
  unassign(sid: string, now: number): void {
    this.storage.sql.exec(
      'UPDATE sessions SET relay_id = NULL, instance = NULL, lease_until = NULL, unassigned_since = coalesce(unassigned_since, ?), updated_at = ? WHERE sid = ?',
      now,
      now,
      sid
    )
  }

  /** The holder's link went away: its sessions may move once the lease lapses at `until`. */
  startLeaseExpiry(instance: string, until: number): number {
    return this.storage.sql.exec('UPDATE sessions SET lease_until = ? WHERE instance = ? AND lease_until IS NULL', until, instance).rowsWritten
  }

  /** The holder came back before its lease lapsed. */
  rebind(sid: string): void {
    this.storage.sql.exec('UPDATE sessions SET lease_until = NULL WHERE sid = ?', sid)
  }

  /** The session is a one-shot `force_new` no longer: a later resume must not wipe it again. */
  clearForceNew(sid: string): void {
    this.storage.sql.exec('UPDATE sessions SET force_new = 0 WHERE sid = ?', sid)
  }

  markConnected(sid: string, connected: boolean): void {
    this.storage.sql.exec('UPDATE sessions SET was_connected = ? WHERE sid = ?', connected ? 1 : 0, sid)
  }

  markLostReported(sid: string): void {
    this.storage.sql.exec('UPDATE sessions SET lost_reported = 1 WHERE sid = ?', sid)
  }

  /** The session is forgotten; its fence stays behind as the account's floor. */
  remove(sid: string): void {
    this.storage.sql.exec(
      `INSERT INTO fence_floors (tenant_id, account_id, fence) SELECT tenant_id, account_id, fence FROM sessions WHERE sid = ?
       ON CONFLICT (tenant_id, account_id) DO UPDATE SET fence = max(fence, excluded.fence)`,
      sid
    )
    this.storage.sql.exec('DELETE FROM sessions WHERE sid = ?', sid)
  }

  /** The earliest moment something is due: a lease lapsing, or an unassigned connected session to report. */
  nextDue(graceMs: number): number | null {
    return this.storage.sql
      .exec<{ at: number | null }>(
        `SELECT min(at) AS at FROM (
           SELECT lease_until AS at FROM sessions WHERE lease_until IS NOT NULL
           UNION ALL
           SELECT unassigned_since + ? AS at FROM sessions WHERE instance IS NULL AND was_connected = 1 AND lost_reported = 0
         )`,
        graceMs
      )
      .one().at
  }

  /** Unassigned sessions that were connected and have had no relay for `graceMs`. */
  lostSince(before: number): SessionRow[] {
    return this.rows(
      'SELECT * FROM sessions WHERE instance IS NULL AND was_connected = 1 AND lost_reported = 0 AND unassigned_since IS NOT NULL AND unassigned_since <= ?',
      before
    )
  }
}
