/**
 * The alpha driver: one Baileys socket at a time per account, its lifecycle (resume or link, open, close and what the
 * close means, reconnect with capped backoff and jitter), honest health (a session that stops answering is reported,
 * never left showing `connected`) and sending. `alphaDriver` is what the relay core registers as `alpha`.
 */
import NodeCache from '@cacheable/node-cache'
import { DEFAULT_CACHE_TTLS } from '@whiskeysockets/baileys'
import type { CacheStore, ConnectionState, WAMessage } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { AlphaProblem, Connector, ConnectorOptions, Driver, SessionState } from '../connector'
import { loadAlphaAuth, type AlphaAuth, type DriverEntries } from './auth-store'
import { handleEvents, type EventContext } from './handle-events'
import { makeStateFilter } from '../state-filter'
import { makeHandoff, STOP_HANDOFF_MS } from '../handoff'
import { makeOutageClock, watchFrames, watchOpening } from './health'
import { jidToPhone, personJid } from './ids'
import { startLinkFlow, type LinkFlow } from './login'
import type { PasskeyProblem } from './passkey-flow'
import { makeMediaFetcher, type FetchMedia } from './media-fetch'
import { makePendingMedia } from './pending-media'
import { makePeerDirectory } from './peers'
import { makeRecentSends } from './recent-sends'
import { makeNumberLookup, newChatRefusal } from './recipients'
import { makeRestriction } from './restriction'
import { alphaAct } from './actions'
import { alphaAttachment } from './media-download'
import { errText, makeSender, withTimeout } from './send'
import { SendError } from './send-error'
import { makeAlphaSocket, type AlphaSocket, type MakeSocket } from './socket'
import {
  BAD_SESSION_CLOSES_MAX,
  BAD_SESSION_WINDOW_MS,
  CLIENT_OUTDATED_CLOSES_MAX,
  CLOSE_CODES,
  CLOSE_MESSAGES,
  classifyClose,
  closeInfo,
  closeRule,
  isLinkWindowEnd,
  PROBLEM_MESSAGES,
  reconnectDelayMs,
} from './state'
import { fetchCurrentVersion, makeVersionSource, type FetchVersion, type VersionSource } from './version'

/** A connection that stayed open this long resets the backoff; shorter ones keep growing it (flapping). */
export const STABLE_CONNECTION_MS = 60_000
export const LOGOUT_TIMEOUT_MS = 10_000
/** Linking sockets that may fail in a row (network, server) before linking is given up. */
export const LINK_RETRIES_MAX = 3
/** How long `stop()` waits for Baileys to end the socket (it closes the WebSocket, then emits the close). */
export const STOP_END_MS = 5_000

export type AlphaDeps = {
  makeSocket: MakeSocket
  fetchMedia: FetchMedia
  now(): number
  random(): number
  /** The web client version every connector of this driver announces (fetched once, shared). */
  versions: VersionSource
}

type Session = {
  sock: AlphaSocket
  link: LinkFlow | null
  /** Linking, or the restart right after the phone confirmed: the device on this socket is one we just linked. */
  newDevice: boolean
  open: boolean
  openedAt: number | null
  closed: boolean
  /** Set when we end the socket on purpose, so its close is not read as a failure. */
  intent: 'stop' | 'logout' | 'passkey' | 'wrong_number' | null
  /** With `intent: 'passkey'`: how the ceremony ended (passkey linking on); unset, the gate itself (off). */
  passkeyProblem: PasskeyProblem | null
  /** Cancels the watches on this socket (opening deadline, liveness). */
  unwatch: Array<() => void>
}

/** A Boom-shaped error, as Baileys' own closes carry, for the closes the driver causes itself. */
function closeError(statusCode: number, message: string): Error {
  return Object.assign(new Error(message), { output: { statusCode } })
}

function baileysLogger(log: Logger): Logger {
  // Baileys logs stanzas and decrypted content at debug/trace; keep it at warn unless the relay is quieter still.
  const level = log.levelVal > log.levels.values['warn']! ? log.level : 'warn'
  return log.child({ upstream: 'baileys' }, { level })
}

export function createAlphaConnector(opts: ConnectorOptions, deps: AlphaDeps): Connector {
  const log = opts.log.child({ accountId: opts.accountId, driver: 'alpha' })
  const emit = makeStateFilter('alpha', log, (state) => opts.events.state(state))
  const handoff = makeHandoff(opts.events)
  let auth: AlphaAuth | null = null
  let session: Session | null = null
  /** `halted`: a terminal problem was reported; nothing reconnects until `start()` is called again. */
  let phase: 'idle' | 'running' | 'halted' | 'stopped' = 'idle'
  let failures = 0
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null
  const outage = makeOutageClock(() => emit({ state: 'disconnected', problem: 'unresponsive', message: PROBLEM_MESSAGES.unresponsive }))
  let queue: Promise<void> = Promise.resolve()
  /** The phone confirmed a link; the socket after the 515 restart still carries the device we just linked. */
  let justPaired = false
  let starting: Promise<void> | null = null
  /** 405 closes in a row (the web client version refused) and 500 closes right after connecting, in a row. */
  let outdatedCloses = 0
  let badSessionCloses = 0
  /** Set while alpha keeps the number out (a restricted close: 402, 403, 406): sends fail at once instead of waiting. */
  let banned: { message: string; until: number | null } | null = null
  const peers = makePeerDirectory(() => requireAuth().state.keys)
  /** The driver's own entries in the stored session; a failed write is retried by the store, so it is only logged. */
  const entries: DriverEntries = {
    read: (prefix) => requireAuth().entries(prefix),
    write: (name, value) =>
      requireAuth()
        .putEntry(name, value)
        .catch((err) => log.warn({ err: errText(err) }, 'alpha: writing driver state to the session failed; the store retries it')),
  }
  const restriction = makeRestriction({
    now: deps.now,
    emit: (state) => emit(state),
    isOpen: () => session?.open === true,
    connectedState,
    entries,
    risk: (r) => handoff.events.risk?.(r),
  })
  const recent = makeRecentSends({ now: deps.now, entries, log })
  const pendingMedia = makePendingMedia({ entries, log })
  /** Kept media messages read at start, handed over with the first socket's events. */
  let replay: WAMessage[] = []
  const numbers = makeNumberLookup(deps.now)
  const sender = makeSender({
    fetchMedia: deps.fetchMedia,
    log,
    openSocket: () => (session?.open ? session.sock : null),
    lookup: numbers,
    recent,
    blocked() {
      if (!banned || (banned.until !== null && banned.until <= deps.now())) return null
      return new SendError('account_restricted', `account_restricted: ${banned.message}`)
    },
    refusal: (jid, sock) => newChatRefusal(restriction.newChatRefusal(), requireAuth().state.keys, jid, sock),
  })
  // Baileys counts retry receipts per message here; a cache per socket would restart the count on every reconnect,
  // so a message the recipient can never decrypt would be re-sent forever. Same TTL as Baileys' own default cache;
  // no sweep timer (expired counts go when read), so a stopped connector leaves nothing running.
  const retryCounts = new NodeCache<unknown>({ stdTTL: DEFAULT_CACHE_TTLS.MSG_RETRY, useClones: false, checkperiod: 0 })
  const msgRetryCounterCache: CacheStore = {
    // Baileys only reads back what it stored (retry counts); the generic is its own interface's.
    get: <T>(key: string) => retryCounts.get(key) as T | undefined,
    set: (key, value) => retryCounts.set(key, value),
    del: (key) => retryCounts.del(key),
    flushAll: () => retryCounts.flushAll(),
  }

  function requireAuth(): AlphaAuth {
    if (!auth) throw new Error('alpha: start() was not called')
    return auth
  }

  function connectedState(): SessionState {
    const user = session?.sock.user
    return { state: 'connected', identifier: opts.phone, upstreamUserId: personJid(user?.lid) ?? personJid(user?.id) }
  }

  function clearRetryTimers() {
    if (reconnectTimer) clearTimeout(reconnectTimer)
    reconnectTimer = null
    outage.clear()
  }

  /** A terminal problem: report it and stay down until `start()`. */
  function halt(kind: 'disconnected', problem: AlphaProblem, message?: string): void
  function halt(kind: 'restricted', problem: AlphaProblem, message: string | undefined, until: number | null): void
  function halt(kind: 'disconnected' | 'restricted', problem: AlphaProblem, message?: string, until: number | null = null) {
    phase = 'halted'
    clearRetryTimers()
    const text = message ?? PROBLEM_MESSAGES[problem]
    banned = kind === 'restricted' ? { message: text, until } : null
    emit(kind === 'restricted' ? { state: kind, problem, message: text, until } : { state: kind, problem, message: text })
  }

  function enqueue(work: () => Promise<void>): Promise<void> {
    queue = queue.then(work).catch((err) => log.error({ err: errText(err) }, 'alpha: event handling failed'))
    return queue
  }

  function connect() {
    if (phase !== 'running') return
    const a = requireAuth()
    const linking = !a.isLinked()
    const sock = deps.makeSocket({
      auth: a.state,
      logger: baileysLogger(log),
      getMessage: sender.getMessage,
      msgRetryCounterCache,
      version: deps.versions.current() ?? undefined,
    })
    const s: Session = {
      sock,
      link: null,
      newDevice: linking || justPaired,
      open: false,
      openedAt: null,
      closed: false,
      intent: null,
      passkeyProblem: null,
      unwatch: [],
    }
    session = s
    if (linking) {
      s.link = startLinkFlow({
        method: opts.linkMethod,
        phone: opts.phone,
        sock,
        now: deps.now,
        emit,
        log,
        onPasskey: () => abandon(s, 'passkey'),
        passkeyLinking: opts.passkeyLinking ?? false,
        creds: a.state.creds,
        onPasskeyFailed: (problem) => {
          s.passkeyProblem = problem
          abandon(s, 'passkey')
        },
      })
      const link = s.link
      s.unwatch.push(() => link.stop())
    } else {
      s.unwatch.push(
        watchOpening(
          () => s.open,
          (reason) => abandon(s, null, closeError(408, reason))
        )
      )
      outage.arm()
    }
    if (!outage.reported) emit({ state: 'connecting' })
    const ctx = eventContext(s, a)
    // Media messages a previous run kept and never saw stored go first (pending-media.ts).
    if (replay.length > 0) handle({ 'messages.upsert': { messages: replay.splice(0), type: 'append' } }, ctx)
    sock.ev.process((events) => {
      // Baileys ends a socket (ours or its own close: network, stream error, failure) by emitting the close and then
      // destroying its event buffer, whose messages it already acknowledged to alpha (socket.js `end`,
      // event-buffer.js `destroy`): a backlog waiting for <ib><offline> would be lost for good. Flushed here, inside
      // the close's own emit, the buffer reaches this handler first, and its messages are handled before the close.
      if (events['connection.update']?.connection === 'close') sock.ev.flush()
      handle(events, ctx)
    })
  }

  /** Queues a batch; one that carries messages or receipts counts as pending for a stop until it is handled. */
  function handle(events: Parameters<typeof handleEvents>[0], ctx: EventContext) {
    const handled = enqueue(() => handleEvents(events, ctx))
    if (events['messages.upsert'] || events['messages.update']) handoff.handling(handled)
  }

  function eventContext(s: Session, a: AlphaAuth): EventContext {
    return {
      log,
      now: deps.now,
      events: handoff.events,
      peers,
      // Baileys mutates the one creds object in place: whichever socket reports a change, the current creds are saved.
      saveCreds: () => a.saveCreds(),
      onConnection: (update) => onConnection(s, update),
      onSendRefused: (code) => s === session && restriction.onSendRefused(code, s.sock),
      // A re-upload is asked through whichever socket is open when the relay core downloads it (it may be later).
      mediaOf: (msg) => alphaAttachment(msg, () => (session?.open ? session.sock : null), log),
      keep: pendingMedia.keep,
    }
  }

  /** Ends a socket ourselves and handles its close right away; Baileys' own close event for it is then ignored. */
  function abandon(s: Session, intent: Session['intent'], error?: Error) {
    if (s.closed) return
    s.intent = intent ?? s.intent
    const err = error ?? closeError(428, `ended by the relay (${intent ?? 'unknown'})`)
    void Promise.resolve(s.sock.end(err)).catch(() => undefined)
    enqueue(() => onClose(s, err))
  }

  async function onConnection(s: Session, update: Partial<ConnectionState>) {
    if (s.closed) return
    if (update.qr) {
      if (s.link) await s.link.onQr(update.qr)
      else log.warn('alpha: a QR code arrived for a linked session; ignoring it')
    }
    if (update.isNewLogin && s.link) {
      s.link.onPaired()
      justPaired = true
      emit({ state: 'connecting' })
    }
    if (update.connection === 'open') onOpen(s)
    if (update.reachoutTimeLock) restriction.onTimelock(update.reachoutTimeLock)
    if (update.connection === 'close') await onClose(s, update.lastDisconnect?.error)
  }

  function onOpen(s: Session) {
    justPaired = false
    banned = null
    outdatedCloses = 0
    s.open = true
    s.openedAt = deps.now()
    outage.clear()
    const linkedPhone = jidToPhone(s.sock.user?.id)
    if (linkedPhone !== null && linkedPhone !== opts.phone) {
      log.warn({ linkedPhone }, 'alpha: the session belongs to another number')
      s.intent = 'wrong_number'
      // A device we just linked on the wrong phone is unlinked again (Baileys closes with 401 after sending the
      // removal); a stored session is only closed, never unlinked: it may be another account's.
      if (!s.newDevice) return abandon(s, 'wrong_number')
      void withTimeout(s.sock.logout(), LOGOUT_TIMEOUT_MS, () => new Error('logout timed out'))
        .catch(() => undefined)
        .finally(() => abandon(s, 'wrong_number'))
      return
    }
    s.unwatch.push(
      watchFrames(s.sock, deps.now, (reason) => {
        log.warn('alpha: no frame from alpha within the liveness timeout; reconnecting')
        abandon(s, null, closeError(408, reason))
      })
    )
    restriction.onOpen(s.sock)
  }

  async function onClose(s: Session, error: unknown) {
    if (s.closed) return
    s.closed = true
    // Read before the watches stop: stopping the link also ends its ceremony.
    const midCeremony = s.link?.passkeyActive ?? false
    for (const stop of s.unwatch) stop()
    if (session === s) session = null
    const wasStable = s.openedAt !== null && deps.now() - s.openedAt >= STABLE_CONNECTION_MS
    const info = closeInfo(error)
    log.info({ statusCode: info.statusCode, intent: s.intent, linking: !!s.link }, 'alpha: socket closed')
    if (s.intent === 'stop' || s.intent === 'logout' || phase !== 'running') return
    const a = requireAuth()

    if (s.intent === 'passkey') {
      await a.wipe()
      return halt('disconnected', s.passkeyProblem ?? 'passkey_required')
    }
    if (midCeremony) {
      // The ceremony cannot go on over another socket; nothing retries it (docs/channels/alpha.md).
      await a.wipe()
      return halt('disconnected', 'passkey_timeout')
    }
    if (s.intent === 'wrong_number') {
      if (s.newDevice) await a.wipe()
      const linked = jidToPhone(s.sock.user?.id)
      return halt(
        'disconnected',
        'logged_out',
        `The device was linked from ${linked ?? 'another number'}, not ${opts.phone}; link again from the phone that owns ${opts.phone}.`
      )
    }
    const verdict = classifyClose(error, deps.now())
    if (verdict.kind === 'restart') return connect()
    if (s.link && !s.link.paired && isLinkWindowEnd(error)) {
      await a.wipe()
      return halt('disconnected', 'link_expired')
    }
    const rule = verdict.kind === 'retry' ? closeRule(error) : null
    if (rule !== 'client_outdated') outdatedCloses = 0
    if (rule !== 'bad_session') badSessionCloses = 0
    switch (rule ?? verdict.kind) {
      case 'logged_out':
        await a.wipe()
        return halt('disconnected', 'logged_out')
      case 'multidevice_mismatch':
        // Terminal (Baileys: `downgrade_webclient`): this device can only be replaced, so the session goes.
        await a.wipe()
        return halt('disconnected', 'logged_out', CLOSE_MESSAGES.multideviceMismatch)
      case 'replaced':
        return halt('disconnected', 'replaced')
      case 'restricted':
        if (verdict.kind !== 'restricted') return
        halt('restricted', 'blocked_by_alpha', info.statusCode === CLOSE_CODES.forbidden ? CLOSE_MESSAGES.forbidden : undefined, verdict.until)
        // A temporary ban ends on its own: come back then, as a new connection.
        if (verdict.until !== null) {
          const until = verdict.until
          phase = 'running'
          reconnectTimer = setTimeout(connect, Math.max(0, until - deps.now()))
        }
        return
      case 'client_outdated':
        outdatedCloses += 1
        if (outdatedCloses >= CLIENT_OUTDATED_CLOSES_MAX) {
          log.error(
            {
              problem: 'client_outdated',
              statusCode: CLOSE_CODES.clientOutdated,
              closes: outdatedCloses,
              version: deps.versions.current()?.join('.') ?? 'built-in',
            },
            'alpha: the web client version is refused (405); upgrade @whiskeysockets/baileys on this relay. The session stays down until then.'
          )
          if (s.link && !s.link.paired) await a.wipe()
          return halt('disconnected', 'client_outdated')
        }
        // The version may just have been retired: fetch the current one before the next attempt.
        log.warn({ statusCode: CLOSE_CODES.clientOutdated, closes: outdatedCloses }, 'alpha: the web client version was refused; fetching the current one')
        await deps.versions.refresh()
        // Stopped or restarted while the version was fetched: that call decides what happens now.
        if (phase !== 'running' || session !== null) return
        return retryLater(s, wasStable)
      case 'bad_session': {
        const quick = s.openedAt === null || deps.now() - s.openedAt < BAD_SESSION_WINDOW_MS
        badSessionCloses = quick ? badSessionCloses + 1 : 1
        if (badSessionCloses >= BAD_SESSION_CLOSES_MAX) {
          log.error({ statusCode: CLOSE_CODES.badSession, closes: badSessionCloses }, 'alpha: the session keeps failing right after connecting; stopping')
          return halt('disconnected', 'logged_out', CLOSE_MESSAGES.badSession)
        }
        return retryLater(s, wasStable)
      }
      case 'retry':
        return retryLater(s, wasStable)
    }
  }

  async function retryLater(s: Session, wasStable: boolean) {
    const a = requireAuth()
    failures = wasStable ? 1 : failures + 1
    if (s.link && !s.link.paired) {
      // A link that broke off cannot be resumed (a requested pairing code already set `me`): start it over,
      // a few times; past that, alpha is not reachable and the user should not watch codes come and go.
      await a.wipe()
      if (failures > LINK_RETRIES_MAX) return halt('disconnected', 'unresponsive', 'alpha could not be reached to link the device; start the connection again.')
    }
    if (!outage.reported) emit({ state: 'connecting' })
    if (!s.newDevice) outage.arm()
    reconnectTimer = setTimeout(connect, reconnectDelayMs(failures, deps.random))
  }

  function stopSocket(intent: 'stop' | 'logout'): Session | null {
    clearRetryTimers()
    restriction.reset()
    banned = null
    const s = session
    session = null
    if (s) {
      s.intent = intent
      // Do not rely on the close event to stop the watches: a socket that never reports its close must not leak them.
      for (const unwatch of s.unwatch) unwatch()
    }
    return s
  }

  async function start() {
    if (phase === 'running') return
    auth ??= await loadAlphaAuth(opts.store, log, { fresh: opts.forceNew })
    // A link abandoned after a pairing code was requested left `me` without `account`; resuming it would fail.
    if (!auth.isLinked() && auth.state.creds.me) await auth.wipe()
    restriction.restore()
    recent.restore()
    replay = pendingMedia.restore()
    phase = 'running'
    failures = 0
    banned = null
    outdatedCloses = 0
    badSessionCloses = 0
    // In the background: this socket uses what is known now; a refused version is fetched again on the 405.
    void deps.versions.refresh()
    connect()
  }

  return {
    start() {
      // Two overlapping calls share one start, so they cannot open two sockets for one session.
      starting ??= start().finally(() => {
        starting = null
      })
      return starting
    },
    send: sender.send,
    /** The owner's passkey steps for the ceremony the linking socket runs (passkey linking on). */
    async login(step) {
      const link = session?.link
      if (!link) return { status: 'refused', error: 'no_login_pending', message: 'This session is not linking a device.', retryAfterS: null }
      return link.submit(step)
    },
    act: (a) => alphaAct({ openSocket: () => (session?.open ? session.sock : null), lookup: numbers }, a),
    async logout() {
      const s = stopSocket('logout')
      phase = 'stopped'
      if (s?.open) {
        await withTimeout(s.sock.logout(), LOGOUT_TIMEOUT_MS, () => new Error('logout timed out')).catch((err) =>
          log.warn({ err: errText(err) }, 'alpha: upstream logout failed; wiping the session anyway')
        )
      } else if (s) {
        await Promise.resolve(s.sock.end(undefined)).catch(() => undefined)
      }
      if (auth) await auth.wipe()
      else await opts.store.clear()
      emit({ state: 'disconnected', problem: 'logged_out', message: 'The session was logged out on request.' })
    },
    async stop() {
      const s = stopSocket('stop')
      phase = 'stopped'
      if (s) await withTimeout(Promise.resolve(s.sock.end(undefined)), STOP_END_MS, () => new Error('end timed out')).catch(() => undefined)
      // The messages the socket emitted, its flushed buffer included, are handled, and what it had acknowledged to
      // alpha reaches the edge before the session may resume elsewhere (a deploy, a failover).
      if (!(await handoff.settled(STOP_HANDOFF_MS))) log.warn('alpha: stopped before the edge stored every message the socket had acknowledged')
      await auth?.flush().catch((err) => log.error({ err: errText(err) }, 'alpha: final session write failed'))
    },
  }
}

export function makeAlphaDriver(deps: Partial<AlphaDeps> & { fetchVersion?: FetchVersion; log?: Logger } = {}): Driver {
  const now = deps.now ?? Date.now
  const fetchMedia = deps.fetchMedia ?? makeMediaFetcher()
  let versions = deps.versions ?? null
  return (opts) => {
    // One version source per driver (so per relay process), made with the first connector's logger.
    versions ??= makeVersionSource(deps.fetchVersion ?? fetchCurrentVersion, now, (deps.log ?? opts.log).child({ driver: 'alpha' }))
    return createAlphaConnector(opts, {
      makeSocket: deps.makeSocket ?? makeAlphaSocket,
      fetchMedia,
      now,
      random: deps.random ?? Math.random,
      versions,
    })
  }
}

export const alphaDriver: Driver = makeAlphaDriver()
