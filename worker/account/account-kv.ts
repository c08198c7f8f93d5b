/**
 * The AccountDO's kv table, typed and served from memory: which account the object is (its ref), where its tenant
 * lives, whether it exists, the send counters and ramp, and the entries other modules own. Each value is read from
 * SQLite once and then kept in memory; every write goes through this object, so memory stays in step. The table is
 * created by storage.ts's migrations, and AccountStore there extends this class with the account's other tables.
 */
import { z } from 'zod'
import { Counters } from './guards'
import { Ramp } from './ramp'

export const AccountRef = z.object({
  tenantId: z.string(),
  accountId: z.string(),
  channel: z.enum(['alpha_web', 'beta', 'sms', 'social', 'custom']),
})
export type AccountRef = z.infer<typeof AccountRef>

/**
 * Where the account's tenant lives as this object knows it (db/placement.ts): read from the directory once, then
 * changed only by a move telling the object (worker/shards/move.ts), or read again when a write met a fence.
 */
export const AccountPlacement = z.object({ shard: z.number().int(), placement: z.number().int(), movingTo: z.number().int().nullable() })
export type AccountPlacement = z.infer<typeof AccountPlacement>

/** A flat value parsed from its stored text once, until the text changes; frozen, so no caller changes the next one's. */
function parsedOnce<S extends z.ZodType<object>>(shape: S): (raw: string) => Readonly<z.infer<S>> {
  let last: { raw: string; value: Readonly<z.infer<S>> } | undefined
  return (raw) => {
    if (last?.raw !== raw) last = { raw, value: Object.freeze(shape.parse(JSON.parse(raw))) }
    return last.value
  }
}

export class AccountKv {
  /** kv values as stored (JSON text; null when absent), filled on first read. */
  protected readonly kv = new Map<string, string | null>()
  /** The ref and placement, read on every call: parsed once per stored text. */
  private readonly refOf = parsedOnce(AccountRef)
  private readonly placementOf = parsedOnce(AccountPlacement)

  constructor(protected readonly storage: DurableObjectStorage) {}

  private rawKv(key: string): string | null {
    const cached = this.kv.get(key)
    if (cached !== undefined) return cached
    const raw = this.storage.sql.exec<{ value: string }>('SELECT value FROM kv WHERE key = ?', key).toArray()[0]?.value ?? null
    this.kv.set(key, raw)
    return raw
  }

  private getKv<S extends z.ZodType>(key: string, shape: S): z.infer<S> | undefined {
    const raw = this.rawKv(key)
    return raw === null ? undefined : shape.parse(JSON.parse(raw))
  }

  /** Writes only a changed value: every storage write holds the object's next reply until it is durable. */
  private putKv(key: string, value: unknown): void {
    const raw = JSON.stringify(value)
    if (this.rawKv(key) === raw) return
    this.storage.sql.exec('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', key, raw)
    this.kv.set(key, raw)
  }

  ref(): Readonly<AccountRef> | undefined {
    const raw = this.rawKv('ref')
    return raw === null ? undefined : this.refOf(raw)
  }

  setRef(ref: AccountRef): void {
    // One key order, so an unchanged ref compares equal as text and is not written again.
    this.putKv('ref', { tenantId: ref.tenantId, accountId: ref.accountId, channel: ref.channel })
  }

  placement(): Readonly<AccountPlacement> | undefined {
    const raw = this.rawKv('placement')
    return raw === null ? undefined : this.placementOf(raw)
  }

  setPlacement(p: AccountPlacement): void {
    this.putKv('placement', { shard: p.shard, placement: p.placement, movingTo: p.movingTo })
  }

  /** A move of the tenant is running: its old shard refuses every write, so the object holds its writes back. */
  moving(): boolean {
    const p = this.placement()
    return p !== undefined && p.movingTo !== null
  }

  /** True once this object saw its account in D1; forgotten when the account is removed. */
  knownToExist(): boolean {
    return this.rawKv('exists') === 'true'
  }

  markExists(): void {
    this.putKv('exists', true)
  }

  counters(): Counters | undefined {
    return this.getKv('counters', Counters)
  }

  setCounters(c: Counters): void {
    this.putKv('counters', c)
  }

  ramp(): Ramp | undefined {
    return this.getKv('ramp', Ramp)
  }

  setRamp(r: Ramp): void {
    this.putKv('ramp', r)
  }

  /** Any other kv entry, parsed with its shape (modules own their keys: `link`, `session_fence`, …). */
  get<S extends z.ZodType>(key: string, shape: S): z.infer<S> | undefined {
    return this.getKv(key, shape)
  }

  put(key: string, value: unknown): void {
    this.putKv(key, value)
  }

  delete(key: string): void {
    if (this.rawKv(key) === null) return
    this.storage.sql.exec('DELETE FROM kv WHERE key = ?', key)
    this.kv.set(key, null)
  }
}
