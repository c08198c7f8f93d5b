/**
 * Baileys' `AuthenticationState` (creds + every signal key type) over the connector's `SessionStore`. The store is
 * read once into memory (`loadAll`); reads are served from memory, writes update memory at once and are batched into
 * `write()` calls, and a `keys.set` resolves only when its batch is durable, as Baileys' transactions expect.
 * Values are serialised with `BufferJSON`, the only encoding that keeps key material intact. The driver's own state
 * that must follow the session to another relay (the 463 hold, recent sends) lives beside the keys as `relay/…`
 * entries, written in the same batches and wiped with them.
 */
import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys'
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap, SignalKeyStore } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { SessionStore } from '../connector'

/** The store key of the creds; every signal key is stored as `<type>/<id>` (types never contain a slash, ids may). */
export const CREDS_KEY = 'creds'
/** The driver's own entries: `relay/<name>` (no Baileys key type is called `relay`). */
export const DRIVER_PREFIX = 'relay/'
/** After a failed write, the changes stay pending and are retried after this long even if nothing else is written. */
export const WRITE_RETRY_MS = 5_000

/** The key types Baileys 7 writes; `lid-mapping`, `device-list`, `tctoken` and `identity-key` are new in v7. */
export const SIGNAL_KEY_TYPES = [
  'pre-key',
  'session',
  'sender-key',
  'sender-key-memory',
  'app-state-sync-key',
  'app-state-sync-version',
  'lid-mapping',
  'device-list',
  'tctoken',
  'identity-key',
] as const satisfies ReadonlyArray<keyof SignalDataTypeMap>

type KeyType = keyof SignalDataTypeMap
const KNOWN_TYPES: ReadonlySet<string> = new Set(SIGNAL_KEY_TYPES)

export function storeKey(type: KeyType, id: string): string {
  return `${type}/${id}`
}

export function serialize(value: unknown): string {
  return JSON.stringify(value, BufferJSON.replacer)
}

/** Parses one stored key. The cast is the boundary of our own round trip: the text came from `serialize` of this type. */
function revive<T extends KeyType>(type: T, text: string): SignalDataTypeMap[T] {
  const parsed: unknown = JSON.parse(text, BufferJSON.reviver)
  // Baileys reads app-state keys as protobuf objects (`keyData` as bytes); plain JSON loses the class, as in its own store.
  const value: unknown =
    type === 'app-state-sync-key' && typeof parsed === 'object' && parsed !== null ? proto.Message.AppStateSyncKeyData.fromObject(parsed) : parsed
  return value as SignalDataTypeMap[T]
}

function reviveCreds(text: string): AuthenticationCreds {
  return JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds
}

/**
 * What the driver's own modules see of the stored session: their entries, read from memory, written in the background
 * (batched with the key writes, retried by the store when a write fails). `write` resolves once the entry is durable
 * and never rejects (a failure is logged and retried by the store); most callers do not wait for it.
 */
export type DriverEntries = {
  read(prefix: string): Map<string, string>
  write(name: string, value: string | null): Promise<void>
}

type Deferred = { resolve(): void; reject(err: unknown): void }

export type AlphaAuth = {
  /** The state to hand to the next socket. A new object after `wipe()`; an old socket's writes are then ignored. */
  readonly state: AuthenticationState
  /** Linked: the phone confirmed this device (`account` is set only by a finished pairing). */
  isLinked(): boolean
  /** Persists the current creds (call on every `creds.update`); resolves when durable. */
  saveCreds(): Promise<void>
  /** Resolves when everything written so far is durable. */
  flush(): Promise<void>
  /** The driver's entries whose names start with `prefix`, by name (the `relay/` prefix taken off). */
  entries(prefix: string): Map<string, string>
  /** Writes (or, with null, deletes) one driver entry; resolves when durable. */
  putEntry(name: string, value: string | null): Promise<void>
  /** Forgets the session everywhere (logout, a link that must start over): memory, pending writes and the store. */
  wipe(): Promise<void>
}

export async function loadAlphaAuth(store: SessionStore, log: Logger, opts: { fresh: boolean }): Promise<AlphaAuth> {
  if (opts.fresh) await store.clear()
  const memory = await store.loadAll()
  for (const key of memory.keys()) {
    if (key !== CREDS_KEY && !key.startsWith(DRIVER_PREFIX) && !KNOWN_TYPES.has(key.slice(0, key.indexOf('/')))) {
      log.debug({ key: key.slice(0, 40) }, 'alpha auth: ignoring an unknown stored key')
    }
  }
  const storedCreds = memory.get(CREDS_KEY)
  let generation = 0
  let state = makeState(storedCreds ? reviveCreds(storedCreds) : initAuthCreds(), generation)

  let pending = new Map<string, string | null>()
  let waiters: Deferred[] = []
  let flushScheduled = false
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  // Every store operation (writes and the clear of a wipe) runs in this one chain, in order, never two at once.
  let chain: Promise<void> = Promise.resolve()

  function serial(op: () => Promise<void>): Promise<void> {
    const done = chain.then(op)
    chain = done.catch(() => undefined)
    return done
  }

  function commit(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      waiters.push({ resolve, reject })
      scheduleFlush()
    })
  }

  /** One write per turn of the chain: whatever accumulates while a write is in flight goes in the next one. */
  function scheduleFlush() {
    if (flushScheduled) return
    flushScheduled = true
    const gen = generation
    void serial(async () => {
      flushScheduled = false
      // Scheduled before a wipe: run again behind the wipe's clear, so nothing written after the wipe is cleared.
      if (gen !== generation) {
        if (waiters.length > 0) scheduleFlush()
        return
      }
      const batch = pending
      const batchWaiters = waiters
      pending = new Map()
      waiters = []
      if (batch.size === 0) {
        for (const w of batchWaiters) w.resolve()
        return
      }
      try {
        await store.write(batch)
        for (const w of batchWaiters) w.resolve()
      } catch (err) {
        // Keep what failed unless something newer replaced it meanwhile, and try again later.
        for (const [k, v] of batch) if (!pending.has(k)) pending.set(k, v)
        log.error({ err: err instanceof Error ? err.message : String(err), keys: batch.size }, 'alpha auth: session write failed')
        for (const w of batchWaiters) w.reject(err)
        if (!retryTimer) {
          retryTimer = setTimeout(() => {
            retryTimer = null
            commit().catch(() => undefined)
          }, WRITE_RETRY_MS)
          retryTimer.unref?.()
        }
      }
    })
  }

  function put(key: string, text: string | null) {
    if (text === null) memory.delete(key)
    else memory.set(key, text)
    pending.set(key, text)
  }

  function makeState(creds: AuthenticationCreds, gen: number): AuthenticationState {
    const keys: SignalKeyStore = {
      get<T extends KeyType>(type: T, ids: string[]) {
        const out: { [id: string]: SignalDataTypeMap[T] } = {}
        for (const id of ids) {
          const text = memory.get(storeKey(type, id))
          if (text !== undefined) out[id] = revive(type, text)
        }
        return out
      },
      async set(data: SignalDataSet) {
        if (gen !== generation) return
        for (const type of Object.keys(data) as KeyType[]) {
          const entries = data[type]
          if (!entries) continue
          for (const [id, value] of Object.entries(entries)) {
            put(storeKey(type, id), value === null || value === undefined ? null : serialize(value))
          }
        }
        await commit()
      },
    }
    return { creds, keys }
  }

  return {
    get state() {
      return state
    },
    isLinked() {
      return !!state.creds.me?.id && !!state.creds.account
    },
    saveCreds() {
      put(CREDS_KEY, serialize(state.creds))
      return commit()
    },
    flush() {
      return commit()
    },
    entries(prefix) {
      const out = new Map<string, string>()
      const full = DRIVER_PREFIX + prefix
      for (const [key, value] of memory) if (key.startsWith(full)) out.set(key.slice(DRIVER_PREFIX.length), value)
      return out
    },
    putEntry(name, value) {
      put(DRIVER_PREFIX + name, value)
      return commit()
    },
    async wipe() {
      generation += 1
      if (retryTimer) clearTimeout(retryTimer)
      retryTimer = null
      // What was pending belonged to the session being forgotten: dropped, and its waiters released.
      for (const w of waiters) w.resolve()
      waiters = []
      pending = new Map()
      memory.clear()
      state = makeState(initAuthCreds(), generation)
      // Queued behind any write in flight, so no earlier write can land after the clear and bring keys back.
      await serial(() => store.clear())
    },
  }
}
