/**
 * The beta driver: one GramJS client per account, logged in by code (+ two-step password) or QR through explicit
 * steps, resumed from its StringSession (sealed by the relay core), kept honest and alive by a probe (beta sends no
 * logged-out event; GramJS gives up reconnecting for good: health.ts rebuilds it), catching up on every update the
 * session missed (catch-up.ts, with the update state saved beside the session), and sending in order with visible
 * flood pauses. `makeBetaDriver` is what the relay registers as `beta`.
 */
import { Api } from 'telegram'
import type { BetaProblem, Connector, ConnectorOptions, Driver, LoginStep, SessionState } from '../connector'
import { makeMediaFetcher, type FetchMedia } from '../alpha/media-fetch'
import { makeBringUp } from './bring-up'
import { CATCH_UP_TIMING, makeCatchUp, UPDATE_STATE_KEY, type CatchUpTiming } from './catch-up'
import { CONTACTS_FIRST_SYNC_WAIT_MS, CONTACTS_SYNC_MS } from './contacts'
import { handleUpdate } from './handle-events'
import { HEALTH_TIMING, type HealthTiming } from './health'
import { startLive, type Live } from './live'
import { startLogin, type LoginFlow } from './login'
import { makeOutbox, OUTBOX_KEY } from './outbox'
import { makePeerDirectory } from './peers'
import { makeStateFilter } from '../state-filter'
import { makeSender } from './send'
import { betaAct, type BetaActionDeps } from './actions'
import { makeRiskSignals } from './risk-signals'
import { withDeadline } from './deadlines'
import { makeGramClient, type BetaClient, type BetaCredentials, type MakeClient } from './socket'
import { classifyError, LOGIN_MESSAGES, PROBLEM_MESSAGES, rpcMessage, type ErrorVerdict } from './state'

export const SESSION_KEY = 'beta-session'
export const LOGOUT_TIMEOUT_MS = 10_000

/** The driver's clocks; production uses the modules' constants, tests and the simulator may scale them. */
export type BetaTiming = { health: HealthTiming; catchUp: CatchUpTiming }

export type BetaDeps = {
  makeClient: MakeClient
  creds: BetaCredentials
  fetchMedia: FetchMedia
  now(): number
  /** How often the address book is synced again besides on beta's change updates (CONTACTS_SYNC_MS). */
  contactsSyncMs: number
  timing: BetaTiming
}

type Fatal = Extract<ErrorVerdict, { kind: 'banned' | 'logged_out' }>

function errText(err: unknown): string {
  return rpcMessage(err) ?? (err instanceof Error ? err.message : String(err))
}

export function createBetaConnector(opts: ConnectorOptions, deps: BetaDeps): Connector {
  const log = opts.log.child({ accountId: opts.accountId, driver: 'beta' })
  const emit = makeStateFilter('beta', log, (state) => opts.events.state(state))
  let client: BetaClient | null = null
  let me: Api.User | null = null
  let login: LoginFlow | null = null
  /** `halted`: a terminal problem was reported; nothing runs until `start()` is called again. */
  let phase: 'idle' | 'login' | 'running' | 'halted' | 'stopped' = 'idle'
  let live: Live | null = null
  /** The session being started has a stored StringSession (resume) rather than none (login). */
  let hasSession = false
  let starting: Promise<void> | null = null
  let queue: Promise<void> = Promise.resolve()
  const peers = makePeerDirectory()
  const outbox = makeOutbox(opts.store)
  const catchUp = makeCatchUp({
    invoke: (request) => (client ? client.invoke(request) : Promise.reject(new Error('beta: no client'))),
    dispatch: (update, users, events) =>
      handleUpdate(update, users, {
        log,
        events,
        peers,
        outbox,
        onLoginToken: () => login?.onLoginToken(),
        onContactsChanged: () => live?.contacts.changed(),
        onReaction: (r) => opts.events.reaction?.(r),
        client: () => client,
      }),
    events: opts.events,
    knows: (userId) => peers.byUserId(userId) !== null,
    save: (raw) => opts.store.write(new Map([[UPDATE_STATE_KEY, raw]])),
    log,
    timing: deps.timing.catchUp,
  })
  const bring = makeBringUp({
    client: () => client,
    active: () => phase !== 'stopped' && phase !== 'halted',
    backoffMs: deps.timing.health.rebuildBackoffMs,
    log,
    enqueue: (step) => enqueue(step),
    onUnresponsive: () => unresponsive(),
    onConnected: (c) => onConnected(c),
  })
  const sender = makeSender({
    client: () => (phase === 'running' ? client : null),
    peers,
    outbox,
    fetchMedia: deps.fetchMedia,
    now: deps.now,
    log,
    bookLoaded: () => (live ? live.contacts.loaded(CONTACTS_FIRST_SYNC_WAIT_MS) : Promise.resolve(false)),
    onSlowed: (until) => {
      risk.raise('flood_wait', until, 'beta asked the account to slow down (FLOOD_WAIT).')
      emit({ state: 'slowed', problem: 'flood_wait', message: PROBLEM_MESSAGES.flood_wait, until })
    },
    onResumed: () => {
      risk.lift('flood_wait')
      if (phase === 'running') emit(connectedState())
    },
    onFatal: (v) => onFatal(v),
    // The session stays up (inbound and receipts still flow, mutual contacts can still be written to).
    onRestricted: () => {
      risk.raise('spam_flag', null, 'beta limited the account for messaging people who do not know it (PEER_FLOOD).')
      if (phase === 'running') emit({ state: 'restricted', problem: 'stranger_flag', message: PROBLEM_MESSAGES.stranger_flag, until: null })
    },
    onSent: () => {
      risk.lift('spam_flag')
      if (phase === 'running') emit(connectedState())
    },
  })
  const risk = makeRiskSignals((r) => opts.events.risk?.(r))
  const actionDeps: BetaActionDeps = {
    client: () => (phase === 'running' ? client : null),
    peers,
    bookLoaded: () => (live ? live.contacts.loaded(CONTACTS_FIRST_SYNC_WAIT_MS) : Promise.resolve(false)),
    onFlood: (seconds) => risk.raise('flood_wait', deps.now() + seconds * 1000, 'beta asked the account to slow down (FLOOD_WAIT).'),
  }

  function connectedState(): SessionState {
    const phone = me?.phone ? `+${me.phone}` : null
    const identifier = phone ?? (me?.username ? `@${me.username}` : opts.phone)
    return { state: 'connected', identifier, upstreamUserId: me ? me.id.toString() : null }
  }

  function clearTimers() {
    live?.stop()
    live = null
    bring.stop()
    login?.stop()
  }

  async function closeClient() {
    const c = client
    client = null
    if (c) await c.destroy().catch((err: unknown) => log.warn({ err: errText(err) }, 'beta: closing the client failed'))
  }

  async function wipe() {
    // Nothing of the old session's update state may be written back after the wipe.
    catchUp.reset()
    await opts.store.clear()
  }

  /** A terminal problem: report it, close the client, stay down until `start()`. */
  async function halt(kind: 'disconnected' | 'restricted', problem: BetaProblem, message = PROBLEM_MESSAGES[problem]) {
    phase = 'halted'
    clearTimers()
    // Reported before the client is closed: closing a real connection takes a round trip the user need not wait for.
    emit(kind === 'restricted' ? { state: kind, problem, message, until: null } : { state: kind, problem, message })
    await catchUp.stop()
    await closeClient()
  }

  function onFatal(v: Fatal) {
    enqueue(async () => {
      if (phase !== 'running') return
      log.warn({ kind: v.kind }, 'beta: the session cannot go on')
      switch (v.kind) {
        case 'logged_out':
          // A duplicated key is dead too: keeping it would only fail the same way on the next connect.
          await wipe()
          return halt('disconnected', 'logged_out', v.message)
        case 'banned':
          sender.block(PROBLEM_MESSAGES.blocked_by_beta)
          return halt('restricted', 'blocked_by_beta')
      }
    })
  }

  function enqueue(work: () => Promise<void>) {
    queue = queue.then(work).catch((err: unknown) => log.error({ err: errText(err) }, 'beta: event handling failed'))
  }

  function unresponsive() {
    emit({ state: 'disconnected', problem: 'unresponsive', message: PROBLEM_MESSAGES.unresponsive })
  }

  async function goLive(user: Api.User) {
    me = user
    phase = 'running'
    bring.reset()
    emit(connectedState())
    live = startLive({
      client: () => (phase === 'running' ? client : null),
      health: deps.timing.health,
      contactsSyncMs: deps.contactsSyncMs,
      log,
      peers,
      catchUp,
      reportContacts: (list) => opts.events.contacts?.(list),
      onFatal: (v) => onFatal(v),
      onUnresponsive: unresponsive,
      onRecovered: () => emit(connectedState()),
    })
  }

  async function onAuthorized(user: Api.User) {
    const c = client
    if (!c) return
    // Durable before `connected`: a relay that dies right after still has the login.
    await opts.store.write(new Map([[SESSION_KEY, c.saveSession()]]))
    login = null
    // A new session starts from the server's update state now.
    catchUp.reset()
    await goLive(user)
  }

  /** A QR login that logged in another account: end that authorization upstream, keep nothing, report it. */
  async function refuseWrongNumber(c: BetaClient, message: string | undefined) {
    await withDeadline(c.invoke(new Api.auth.LogOut()), LOGOUT_TIMEOUT_MS, 'logging out').catch((err: unknown) =>
      log.warn({ err: errText(err) }, 'beta: logging out the wrong account failed; wiping the session anyway')
    )
    await wipe()
    return halt('disconnected', 'wrong_number', message)
  }

  async function resume() {
    const c = client
    if (!c || phase === 'stopped' || phase === 'halted') return
    try {
      const users = await c.invoke(new Api.users.GetUsers({ id: [new Api.InputUserSelf()] }))
      const user = Array.isArray(users) ? users.find((u): u is Api.User => u instanceof Api.User) : undefined
      if (!user) throw new Error('beta: users.GetUsers(self) answered no user')
      await goLive(user)
    } catch (err) {
      const v = classifyError(err)
      log.warn({ err: errText(err), kind: v.kind }, 'beta: resuming the stored session failed')
      if (v.kind === 'logged_out') {
        await wipe()
        return halt('disconnected', 'logged_out', v.message)
      }
      if (v.kind === 'banned') return halt('restricted', 'blocked_by_beta')
      unresponsive()
      bring.retry()
    }
  }

  /** Connected: the stored session is resumed, or the login begins. */
  async function onConnected(c: BetaClient) {
    if (hasSession) return resume()
    if (login) return
    phase = 'login'
    login = startLogin({
      client: c,
      creds: deps.creds,
      phone: opts.phone,
      method: opts.linkMethod === 'qr' ? 'qr' : 'code',
      now: deps.now,
      emit,
      log,
      onAuthorized,
      onFailed: (problem, message) =>
        void (problem === 'wrong_number' ? refuseWrongNumber(c, message) : halt(problem === 'blocked_by_beta' ? 'restricted' : 'disconnected', problem)).catch(
          (err: unknown) => log.error({ err: errText(err) }, 'beta: halting failed')
        ),
    })
    await login.begin()
  }

  async function start() {
    if (phase === 'running' || phase === 'login') return
    const entries = await opts.store.loadAll()
    if (opts.forceNew) await wipe()
    const saved = opts.forceNew ? '' : (entries.get(SESSION_KEY) ?? '')
    outbox.load(opts.forceNew ? undefined : entries.get(OUTBOX_KEY))
    catchUp.load(opts.forceNew ? undefined : entries.get(UPDATE_STATE_KEY))
    const c = deps.makeClient(saved, { phone: opts.phone })
    client = c
    phase = 'idle'
    c.onUpdates((updates) => catchUp.onUpdates(updates))
    c.onLink((event) => phase === 'running' && live?.onLink(event))
    emit({ state: 'connecting' })
    hasSession = saved !== ''
    await bring.start()
  }

  return {
    start() {
      // Two overlapping calls share one start, so they cannot open two clients for one session.
      starting ??= start().finally(() => {
        starting = null
      })
      return starting
    },
    send: (m) => sender.send(m),
    act: (a) => betaAct(actionDeps, a),
    async login(step: LoginStep) {
      if (phase !== 'login' || !login) return { status: 'refused', error: 'no_login_pending', message: LOGIN_MESSAGES.no_login_pending, retryAfterS: null }
      return login.submit(step)
    },
    async logout() {
      const wasLive = phase === 'running'
      phase = 'stopped'
      clearTimers()
      await catchUp.stop()
      const c = client
      if (c && wasLive) {
        await withDeadline(c.invoke(new Api.auth.LogOut()), LOGOUT_TIMEOUT_MS, 'logging out').catch((err: unknown) =>
          log.warn({ err: errText(err) }, 'beta: upstream logout failed; wiping the session anyway')
        )
      }
      await closeClient()
      await wipe()
      emit({ state: 'disconnected', problem: 'logged_out', message: 'The session was logged out on request.' })
    },
    async stop() {
      phase = 'stopped'
      clearTimers()
      // What the edge has stored is saved before the session moves (a failover resumes from it).
      await catchUp.stop()
      await closeClient()
    },
  }
}

/** The operator's API id and hash (RELAY_BETA_API_ID / RELAY_BETA_API_HASH); a tenant's own relay brings its own. */
export function makeBetaDriver(
  deps: Partial<Omit<BetaDeps, 'timing'>> & { creds: BetaCredentials; timing?: { health?: Partial<HealthTiming>; catchUp?: Partial<CatchUpTiming> } }
): Driver {
  const full: BetaDeps = {
    creds: deps.creds,
    makeClient: deps.makeClient ?? makeGramClient(deps.creds),
    fetchMedia: deps.fetchMedia ?? makeMediaFetcher(),
    now: deps.now ?? Date.now,
    contactsSyncMs: deps.contactsSyncMs ?? CONTACTS_SYNC_MS,
    timing: {
      health: { ...HEALTH_TIMING, ...deps.timing?.health },
      catchUp: { ...CATCH_UP_TIMING, ...deps.timing?.catchUp },
    },
  }
  return (opts) => createBetaConnector(opts, full)
}
