/**
 * The AccountDO's own SQLite storage, in one place: the schema, its version, and typed accessors (those of the kv
 * table in account-kv.ts, which AccountStore extends).
 * It holds what must change atomically with a send decision: daily counters, ramp state, per-contact loop-guard
 * state, the opener window and the alarm timers; for alpha/beta also the link state and the relay's encrypted
 * session. Messages themselves live in D1.
 *
 * The small, hot entries (kv values, timers, the webhook owner) are read from SQLite once and then served from
 * memory: every write goes through this object, so memory stays in step, and the inbound path no longer pays a
 * SQLite query for each of them per message (a profile of an inbound burst put `timerAt` alone at 5 % of the CPU).
 */
import { EMPTY_GUARD, type ContactGuard } from './guards'
import { migrateSqlite } from '../lib/do-migrations'
import { SendsInFlight } from './in-flight'
import { AccountKv } from './account-kv'

/** Bump when MIGRATIONS grows; each entry runs once, in order, inside the constructor. */
const MIGRATIONS: string[] = [
  `CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE contact_guard (
     contact_id TEXT PRIMARY KEY,
     has_inbound INTEGER NOT NULL,
     sends_since_inbound INTEGER NOT NULL,
     first_sent_at INTEGER
   );
   CREATE TABLE openers (id INTEGER PRIMARY KEY, text_hash TEXT NOT NULL, contact_id TEXT NOT NULL, at INTEGER NOT NULL);
   CREATE INDEX openers_by_text ON openers (text_hash, at);
   CREATE TABLE timers (name TEXT PRIMARY KEY, due_at INTEGER NOT NULL);`,
  // Whose events this object fans out to webhooks. Kept apart from kv: it must survive a removal, because the
  // deliveries of events an account emitted (its own account.disconnected) outlive the account.
  `CREATE TABLE webhook_owner (id INTEGER PRIMARY KEY CHECK (id = 1), tenant_id TEXT NOT NULL, account_id TEXT NOT NULL);`,
  // alpha/beta: the relay's encrypted session (names are keyed MACs, values AES-GCM; the edge cannot read either).
  `CREATE TABLE session_entries (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE peer_contacts (address TEXT PRIMARY KEY, contact_id TEXT NOT NULL);`,
  // SMS and page inbox: inbound messages waiting for their attachments to be fetched into the media store, in
  // arrival order (account/inbound-queue.ts). One row per provider message id, so a re-delivered webhook is one row.
  `CREATE TABLE inbound_queue (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     upstream_id TEXT NOT NULL UNIQUE,
     item TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL
   );`,
]

/** Shapes of the kv entries, kept here too for the many modules that import them from the account's storage. */
export { AccountPlacement, AccountRef } from './account-kv'

export type TimerName = 'delivery' | 'webhooks' | 'fanout' | 'media'

/** A queued inbound message (account/inbound-queue.ts parses `item`). */
export type QueuedRow = { seq: number; upstreamId: string; item: string; attempts: number; nextAt: number }

/** Rows per multi-row guard write: one bound parameter each, within SQLite's and the storage API's limits. */
const GUARD_ROWS_PER_EXEC = 50
/** People remembered as reset at most (`knownReset`): past it the memory starts over, which costs writes, not safety. */
const KNOWN_RESET_MAX = 10_000

export class AccountStore extends AccountKv {
  /** Bumped by every removal; a read that started before a removal must not re-mark the account as existing. */
  removals = 0
  /** Sends counted but not yet committed, and what happened to their people meanwhile (send.ts gives back on failure). */
  readonly inFlight = new SendsInFlight()
  private timers: Map<TimerName, number> | undefined
  /** People whose loop-guard counter restarts with a committed message, not yet written (see `recordInbound`). */
  private readonly guardResets = new Set<string>()
  /**
   * People whose stored guard row is known to be reset (has_inbound 1, counter 0) by a reset this object wrote: a
   * person writing several messages in a row needs the write once. Any other write of their row (a send counted or
   * given back: `setContactGuard`) forgets them first; the object forgets them all when it restarts.
   */
  private readonly knownReset = new Set<string>()
  /** Inbound messages committed but not yet added to the stored totals (totals.ts adds them a moment later). */
  inboundUntallied = 0
  /** A write of `inboundUntallied` is scheduled (`writeInboundTallySoon` in account/totals.ts). */
  tallyDue = false
  /** undefined: not read yet; null: none stored. */
  private owner: { tenantId: string; accountId: string } | null | undefined

  constructor(storage: DurableObjectStorage) {
    super(storage)
    migrateSqlite(storage, MIGRATIONS)
  }

  contactGuard(contactId: string): ContactGuard | undefined {
    this.writeGuardResets()
    const row = this.storage.sql
      .exec<{ has_inbound: number; sends_since_inbound: number; first_sent_at: number | null }>(
        'SELECT has_inbound, sends_since_inbound, first_sent_at FROM contact_guard WHERE contact_id = ?',
        contactId
      )
      .toArray()[0]
    return row ? { hasInbound: row.has_inbound === 1, sendsSinceInbound: row.sends_since_inbound, firstSentAt: row.first_sent_at } : undefined
  }

  setContactGuard(contactId: string, g: ContactGuard): void {
    this.writeGuardResets()
    this.knownReset.delete(contactId)
    this.storage.sql.exec(
      `INSERT INTO contact_guard (contact_id, has_inbound, sends_since_inbound, first_sent_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (contact_id) DO UPDATE SET has_inbound = excluded.has_inbound,
         sends_since_inbound = excluded.sends_since_inbound, first_sent_at = excluded.first_sent_at`,
      contactId,
      g.hasInbound ? 1 : 0,
      g.sendsSinceInbound,
      g.firstSentAt
    )
  }

  /**
   * Loop-guard state after the person wrote: their counter starts over. Remembered, and written for all the people
   * of a burst at once (`writeGuardResets`, which every other read or write of the guard runs first, so none sees
   * it stale). Answers whether this is the first reset waiting, so the caller schedules one write per burst.
   */
  recordInbound(contactId: string): boolean {
    this.inFlight.wrote(contactId)
    const first = this.guardResets.size === 0
    this.guardResets.add(contactId)
    return first
  }

  /**
   * Writes the loop-guard resets `recordInbound` remembered, but those of people whose row is reset already (it would
   * change nothing): one statement for up to GUARD_ROWS_PER_EXEC people.
   */
  writeGuardResets(): void {
    if (this.guardResets.size === 0) return
    const ids = [...this.guardResets].filter((id) => !this.knownReset.has(id))
    this.guardResets.clear()
    if (this.knownReset.size + ids.length > KNOWN_RESET_MAX) this.knownReset.clear()
    for (let at = 0; at < ids.length; at += GUARD_ROWS_PER_EXEC) {
      const chunk = ids.slice(at, at + GUARD_ROWS_PER_EXEC)
      // A new row is EMPTY_GUARD with the person's inbound: no first send yet (first_sent_at NULL).
      this.storage.sql.exec(
        `INSERT INTO contact_guard (contact_id, has_inbound, sends_since_inbound, first_sent_at) VALUES ${chunk.map(() => '(?, 1, 0, NULL)').join(', ')}
         ON CONFLICT (contact_id) DO UPDATE SET has_inbound = 1, sends_since_inbound = 0`,
        ...chunk
      )
      // Remembered once written: a reset that failed is not known to be stored.
      for (const id of chunk) this.knownReset.add(id)
    }
  }

  /** A re-delivered inbound message proves the person wrote, but must not restart their counter again. */
  recordDuplicateInbound(contactId: string): void {
    this.writeGuardResets()
    this.storage.sql.exec(
      `INSERT INTO contact_guard (contact_id, has_inbound, sends_since_inbound, first_sent_at) VALUES (?, 1, ?, ?)
       ON CONFLICT (contact_id) DO UPDATE SET has_inbound = 1 WHERE has_inbound = 0`,
      contactId,
      EMPTY_GUARD.sendsSinceInbound,
      EMPTY_GUARD.firstSentAt
    )
  }

  countOpeners(textHash: string, since: number): number {
    return this.storage.sql.exec<{ n: number }>('SELECT count(*) AS n FROM openers WHERE text_hash = ? AND at > ?', textHash, since).one().n
  }

  addOpener(textHash: string, contactId: string, at: number, pruneBefore: number): void {
    this.storage.sql.exec('DELETE FROM openers WHERE at <= ?', pruneBefore)
    this.storage.sql.exec('INSERT INTO openers (text_hash, contact_id, at) VALUES (?, ?, ?)', textHash, contactId, at)
  }

  removeOpener(contactId: string, at: number): void {
    this.storage.sql.exec('DELETE FROM openers WHERE contact_id = ? AND at = ?', contactId, at)
  }

  private timerMap(): Map<TimerName, number> {
    this.timers ??= new Map(
      this.storage.sql
        .exec<{ name: TimerName; due_at: number }>('SELECT name, due_at FROM timers')
        .toArray()
        .map((r) => [r.name, r.due_at])
    )
    return this.timers
  }

  setTimer(name: TimerName, dueAt: number): void {
    const timers = this.timerMap()
    if (timers.get(name) === dueAt) return
    this.storage.sql.exec('INSERT INTO timers (name, due_at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET due_at = excluded.due_at', name, dueAt)
    timers.set(name, dueAt)
  }

  clearTimer(name: TimerName): void {
    const timers = this.timerMap()
    if (!timers.has(name)) return
    this.storage.sql.exec('DELETE FROM timers WHERE name = ?', name)
    timers.delete(name)
  }

  dueTimers(now: number): TimerName[] {
    return [...this.timerMap()].filter(([, at]) => at <= now).map(([name]) => name)
  }

  timerAt(name: TimerName): number | null {
    return this.timerMap().get(name) ?? null
  }

  nextTimerAt(): number | null {
    const ats = [...this.timerMap().values()]
    return ats.length === 0 ? null : Math.min(...ats)
  }

  /** Queues an inbound message behind the others; false when its upstream id is already queued (a re-delivery). */
  enqueueInbound(upstreamId: string, item: string, at: number): boolean {
    return this.storage.sql.exec('INSERT OR IGNORE INTO inbound_queue (upstream_id, item, next_at) VALUES (?, ?, ?)', upstreamId, item, at).rowsWritten > 0
  }

  /** The oldest queued inbound message: the next to store, so the account's messages keep their arrival order. */
  inboundHead(): QueuedRow | undefined {
    const r = this.storage.sql
      .exec<{ seq: number; upstream_id: string; item: string; attempts: number; next_at: number }>(
        'SELECT seq, upstream_id, item, attempts, next_at FROM inbound_queue ORDER BY seq LIMIT 1'
      )
      .toArray()[0]
    return r ? { seq: r.seq, upstreamId: r.upstream_id, item: r.item, attempts: r.attempts, nextAt: r.next_at } : undefined
  }

  inboundQueued(): boolean {
    return this.inboundHead() !== undefined
  }

  deferInbound(seq: number, attempts: number, nextAt: number): void {
    this.storage.sql.exec('UPDATE inbound_queue SET attempts = ?, next_at = ? WHERE seq = ?', attempts, nextAt, seq)
  }

  dropInbound(seq: number): void {
    this.storage.sql.exec('DELETE FROM inbound_queue WHERE seq = ?', seq)
  }

  sessionEntries(): Record<string, string> {
    const out: Record<string, string> = {}
    for (const r of this.storage.sql.exec<{ name: string; value: string }>('SELECT name, value FROM session_entries')) out[r.name] = r.value
    return out
  }

  /** Applies a relay's session update atomically: `null` deletes an entry, `clear` wipes the rest first. */
  writeSessionEntries(clear: boolean, changes: Record<string, string | null>): void {
    const sql = this.storage.sql
    this.storage.transactionSync(() => {
      if (clear) sql.exec('DELETE FROM session_entries')
      for (const [name, value] of Object.entries(changes)) {
        if (value === null) sql.exec('DELETE FROM session_entries WHERE name = ?', name)
        else sql.exec('INSERT INTO session_entries (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', name, value)
      }
    })
  }

  /** The contact id already used for an upstream address (`phone:+44…`, `lid:…`), so inbound needs no D1 lookup. */
  peerContact(address: string): string | undefined {
    return this.storage.sql.exec<{ contact_id: string }>('SELECT contact_id FROM peer_contacts WHERE address = ?', address).toArray()[0]?.contact_id
  }

  rememberPeerContact(addresses: string[], contactId: string): void {
    for (const a of addresses) this.storage.sql.exec('INSERT OR IGNORE INTO peer_contacts (address, contact_id) VALUES (?, ?)', a, contactId)
  }

  clearSessionEntries(): void {
    this.storage.sql.exec('DELETE FROM session_entries')
  }

  webhookOwner(): { tenantId: string; accountId: string } | undefined {
    if (this.owner === undefined) {
      const row = this.storage.sql.exec<{ tenant_id: string; account_id: string }>('SELECT tenant_id, account_id FROM webhook_owner').toArray()[0]
      this.owner = row ? { tenantId: row.tenant_id, accountId: row.account_id } : null
    }
    return this.owner ?? undefined
  }

  setWebhookOwner(owner: { tenantId: string; accountId: string }): void {
    const stored = this.webhookOwner()
    if (stored?.tenantId === owner.tenantId && stored.accountId === owner.accountId) return
    this.storage.sql.exec(
      'INSERT INTO webhook_owner (id, tenant_id, account_id) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, account_id = excluded.account_id',
      owner.tenantId,
      owner.accountId
    )
    this.owner = { tenantId: owner.tenantId, accountId: owner.accountId }
  }

  /**
   * The account was removed: its timers stop and it no longer counts as existing. Guard state (counters, loop guard,
   * opener window, ramp) and the address-to-contact map stay: the same account added again is the same sender (see
   * AccountDO.removed); its linked session is wiped. Webhook
   * deliveries of events already emitted are the account's output, not its state, so their owner and timers stay.
   */
  accountRemoved(): void {
    this.removals++
    // The linked session goes too: a removed number must never resume upstream. Messages still waiting for their
    // media are dropped with the account (its media is deleted too).
    this.storage.sql.exec(
      "DELETE FROM timers WHERE name NOT IN ('webhooks', 'fanout'); DELETE FROM kv WHERE key = 'exists'; DELETE FROM session_entries; DELETE FROM inbound_queue;"
    )
    this.timers = new Map([...this.timerMap()].filter(([name]) => name === 'webhooks' || name === 'fanout'))
    this.kv.set('exists', null)
  }
}
