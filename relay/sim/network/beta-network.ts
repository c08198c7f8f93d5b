/**
 * The simulated beta upstream at the level of its API (TL requests in, TL objects out, errors as GramJS raises
 * them): numbers with or without accounts, code logins (codes the app receives, with an expiry), two-step passwords
 * checked by real SRP, QR logins (export, accept on the phone, UpdateLoginToken, import, data-center migration),
 * address books with beta's cache hash, private messages in both directions with per-viewer access hashes, read-outbox
 * updates, each account's update box (pts, seq; updates.GetState and updates.GetDifference with slices and
 * too-long answers) and chat history, uploads and downloads in parts, flood waits, PEER_FLOOD, bans, sessions revoked
 * from the app or duplicated. Updates reach only the sessions connected when they happen: a session that was away
 * asks for the difference, as on beta. The relay reaches it through the fake data centre (beta-dc/: the real GramJS
 * client over MTProto); the driver's unit tests call it in-process (test/fixtures/beta-network.ts). It is as strict as
 * beta: the app's api id and hash, the code's hash, the SRP proof, the access hash on every peer.
 */
import { createHash, randomBytes } from 'node:crypto'
import bigInt from 'big-integer'
import { Api, errors } from 'telegram'
import { contactsHash, upstreamPhoneToE164 } from '../../beta/ids'
import type { BetaCredentials } from '../../beta/socket'
import { BetaAccount, type BetaFile, type BetaOutboxEntry } from './beta-account'
import { betaChatAction, quotedId } from './beta-chat-actions'
import { SrpVerifier } from './beta-srp'
import { DIFFERENCE_SLICE, UPDATE_LOG_MAX, type DifferenceOptions } from './beta-updates'

/** The app credentials the simulated network accepts from the simulator's relay. */
export const SIM_BETA_CREDS: BetaCredentials = { apiId: 20_000_001, apiHash: '5151515151515151515151515151a1fa' }

export type BetaTiming = {
  /** Life of a login code. */
  codeMs: number
  /** Life of a QR login token. */
  qrMs: number
}
/** beta's own values, about: codes live minutes, login tokens 30 seconds. */
export const DEFAULT_BETA_TIMING: BetaTiming = { codeMs: 5 * 60_000, qrMs: 30_000 }

/** The largest part upload.GetFile answers, as beta's 512 KiB. */
export const FILE_PART_MAX = 512 * 1024

export type AuthKey = {
  id: string
  dc: number
  userId: string | null
  /** The code or QR was right; the account's password is awaited on this key. */
  passwordPendingFor: string | null
  revoked: boolean
  duplicated: boolean
  /** The number the client said it logs in for: ties a QR login to the phone that will scan it. */
  phone: string | null
}

type PendingCode = { phone: string; code: string; expiresAt: number }
type Token = { key: string; token: Buffer; expiresAt: number; acceptedBy: string | null }
type StoredFile = BetaFile & { id: bigInt.BigInteger; accessHash: bigInt.BigInteger; kind: 'photo' | 'document'; voiceNote: boolean }
type Listener = (updates: Api.TypeUpdates) => void

/** The wire form of each error raised (GramJS rewrites some messages, e.g. FLOOD_WAIT_30 into a FloodWaitError). */
const rawMessages = new WeakMap<Error, { message: string; code: number }>()

/** An RPC error exactly as GramJS raises it (FLOOD_WAIT_X becomes a FloodWaitError, and so on). */
export function rpcError(message: string, code: number, request: Api.AnyRequest): Error {
  const made: unknown = errors.RPCMessageToError(new Api.RpcError({ errorCode: code, errorMessage: message }), request)
  const err = made instanceof Error ? made : new errors.RPCError(message, request, code)
  rawMessages.set(err, { message, code })
  return err
}

/** The code and message an error raised by the network travels as, or null for anything that is not an RPC error. */
export function rpcWireForm(err: unknown): { message: string; code: number } | null {
  if (!(err instanceof Error)) return null
  return rawMessages.get(err) ?? (err instanceof errors.RPCError ? { message: err.errorMessage, code: err.code ?? 400 } : null)
}

const digitsOf = (phone: string) => phone.replace(/^\+/, '')

export class SimBetaNetwork {
  /** By E.164 number. */
  readonly accounts = new Map<string, BetaAccount>()
  readonly keys = new Map<string, AuthKey>()
  /** The newest code each number's app received (GET /sim/beta/{phone}/code). */
  readonly codesReceived = new Map<string, { code: string; expiresAt: number }>()
  /** The network's file server (GET /sim/media/beta/{id}): what people sent and received. */
  readonly files = new Map<string, StoredFile>()
  mediaOrigin = ''
  private readonly codes = new Map<string, PendingCode>()
  private readonly tokens: Token[] = []
  private readonly srp = new SrpVerifier()
  private readonly listeners = new Map<string, Listener>()
  private readonly uploads = new Map<string, Buffer[]>()
  private nextUserId = 7_000_000_001
  private codeSeq = 0
  /** How updates.GetDifference slices, and how far back the network remembers (control API: /sim/beta/dc). */
  readonly updates: DifferenceOptions = { sliceSize: DIFFERENCE_SLICE, logMax: UPDATE_LOG_MAX }

  constructor(
    readonly opts: {
      creds: BetaCredentials
      timing?: BetaTiming
      /** Every number has an account until told otherwise (the simulator); else only those added (unit tests). */
      autoRegister: boolean
      now?: () => number
    }
  ) {}

  get timing(): BetaTiming {
    return this.opts.timing ?? DEFAULT_BETA_TIMING
  }
  now(): number {
    return (this.opts.now ?? Date.now)()
  }
  nowS(): number {
    return Math.floor(this.now() / 1000)
  }

  // ── numbers and people ──────────────────────────────────────────────────────────────────────────────────────

  /** The number's account, created (registered) on first sight. */
  account(phone: string): BetaAccount {
    const e164 = `+${digitsOf(phone)}`
    let a = this.accounts.get(e164)
    if (!a) {
      a = new BetaAccount(e164, String(this.nextUserId++))
      this.accounts.set(e164, a)
    }
    return a
  }

  /** The number's account if it has one (unit tests add them; the simulator registers every number). */
  lookup(phone: string): BetaAccount | null {
    const known = this.accounts.get(`+${digitsOf(phone)}`)
    if (known) return known.registered ? known : null
    return this.opts.autoRegister ? this.account(phone) : null
  }

  byUserId(userId: string): BetaAccount | null {
    for (const a of this.accounts.values()) if (a.userId === userId) return a
    return null
  }

  /** Access hashes computed so far, by `viewer:target` (a hash per pushed message showed in a profile of a burst). */
  private readonly hashes = new Map<string, bigint>()

  /** The access hash `viewer` sees for `target`; stable per pair, as beta's are per account. */
  accessHash(viewer: string, target: string): bigint {
    const pair = `${viewer}:${target}`
    let hash = this.hashes.get(pair)
    if (hash === undefined) {
      hash = createHash('sha256').update(pair).digest().readBigInt64BE(0)
      this.hashes.set(pair, hash)
    }
    return hash
  }

  userAs(viewer: string, target: BetaAccount): Api.User {
    const me = this.byUserId(viewer)
    const self = viewer === target.userId
    const inBook = me?.contacts.includes(target.userId) ?? false
    return new Api.User({
      id: bigInt(target.userId),
      self,
      contact: inBook,
      accessHash: bigInt(this.accessHash(viewer, target.userId)),
      firstName: target.firstName,
      lastName: target.lastName ?? undefined,
      username: target.username ?? undefined,
      phone: self || inBook || !target.phoneHidden ? target.digits : undefined,
    })
  }

  /** Replaces the address book (by number; every number named gets an account); the sessions hear of it. */
  setContacts(owner: BetaAccount, contacts: Array<{ phone: string; name: string | null }>): void {
    owner.contacts = contacts.map((c) => {
      const a = this.account(c.phone)
      if (c.name) a.setName(c.name)
      return a.userId
    })
    const date = this.nowS()
    this.push(owner, new Api.Updates({ updates: [new Api.UpdateContactsReset()], users: [], chats: [], date, seq: owner.box.nextSeq(date) }))
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────────────────────

  /** A client connects with its stored auth key (or none yet): the key it now uses. */
  openKey(keyId: string | null, phone: string | null): AuthKey {
    const known = keyId ? this.keys.get(keyId) : undefined
    if (known) return known
    // A key the network does not know (never issued, or forgotten) gets no authorization: calls answer 401.
    const key: AuthKey = {
      id: keyId ?? randomBytes(8).toString('hex'),
      dc: 2,
      userId: null,
      passwordPendingFor: null,
      revoked: false,
      duplicated: false,
      phone,
    }
    this.keys.set(key.id, key)
    return key
  }

  /** Updates for this key go to `listener` from now on (its connection); nothing that happened before is replayed. */
  listen(keyId: string, listener: Listener | null): void {
    if (!listener) this.listeners.delete(keyId)
    else this.listeners.set(keyId, listener)
  }

  switchDC(keyId: string, dc: number): void {
    const k = this.keys.get(keyId)
    if (k) k.dc = dc
  }

  liveSessions(a: BetaAccount): AuthKey[] {
    return [...this.keys.values()].filter((k) => k.userId === a.userId && !k.revoked)
  }

  /** The user ends every session from the app (Settings, Devices): no update is pushed; the next call answers 401. */
  revoke(a: BetaAccount): void {
    for (const k of this.liveSessions(a)) k.revoked = true
  }

  /** The same auth key shows up elsewhere: every later call on it answers AUTH_KEY_DUPLICATED. */
  duplicate(a: BetaAccount): void {
    for (const k of this.liveSessions(a)) k.duplicated = true
  }

  pendingLogin(a: BetaAccount): 'code' | 'qr' | null {
    const now = this.now()
    if (this.liveToken(a)) return 'qr'
    for (const c of this.codes.values()) if (digitsOf(c.phone) === a.digits && c.expiresAt > now) return 'code'
    return null
  }

  private liveToken(a: BetaAccount): Token | null {
    const now = this.now()
    return (
      this.tokens
        .filter((t) => t.acceptedBy === null && t.expiresAt * 1000 > now && this.keys.get(t.key)?.phone && digitsOf(this.keys.get(t.key)!.phone!) === a.digits)
        .at(-1) ?? null
    )
  }

  /**
   * The phone scans the QR its number's login shows and accepts it: beta pushes UpdateLoginToken to that client.
   * `shownFor`: the number whose login showed the QR, when another account's app scans it (beta lets any logged-in
   * app accept any QR; the account that accepts is the one logged in).
   */
  acceptQr(a: BetaAccount, shownFor: BetaAccount = a): boolean {
    const t =
      this.liveToken(shownFor) ?? this.tokens.filter((x) => x.acceptedBy === null && x.expiresAt * 1000 > this.now() && !this.keys.get(x.key)?.phone).at(-1)
    if (!t) return false
    t.acceptedBy = a.userId
    this.listeners.get(t.key)?.(new Api.UpdateShort({ update: new Api.UpdateLoginToken(), date: this.nowS() }))
    return true
  }

  // ── people writing and reading ───────────────────────────────────────────────────────────────────────────────

  /**
   * `from` writes to `to`: a pts event in both accounts' boxes, pushed to the sessions connected now. The recipient
   * gets it as Updates with `from` attached, or in short form (UpdateShortMessage, no user: `short`), as beta sends
   * messages from people the session is expected to know.
   */
  inbound(
    from: BetaAccount,
    to: BetaAccount,
    text: string,
    file: (BetaFile & { voiceNote: boolean }) | null = null,
    short = false,
    replyTo: number | null = null
  ): number {
    const media = file ? this.storeMedia(file) : undefined
    const id = this.deliver(from, to, text, media, short, replyTo)
    // The sender's other sessions see their own message (when the sender is an account someone runs).
    const mine = new Api.Message({ id: from.nextMessageId++, peerId: this.peerOf(to), date: this.nowS(), message: text, out: true, media })
    const own = this.recordMessage(from, mine, [to.userId])
    this.push(from, () => new Api.Updates({ updates: [own], users: [this.userAs(from.userId, to)], chats: [], date: mine.date, seq: 0 }))
    return id
  }

  /** The recipient's copy of a message `from` wrote: its own id, a pts event in its box, pushed to its sessions. */
  private deliver(
    from: BetaAccount,
    to: BetaAccount,
    text: string,
    media: Api.TypeMessageMedia | undefined,
    short: boolean,
    replyTo: number | null = null
  ): number {
    const date = this.nowS()
    const id = to.nextMessageId++
    // A quoted reply names the quoted message by its id in the recipient's own numbering (each account numbers its chats).
    const header = replyTo === null ? undefined : new Api.MessageReplyHeader({ replyToMsgId: replyTo })
    const message = new Api.Message({ id, peerId: this.peerOf(from), fromId: this.peerOf(from), date, message: text, out: false, media, replyTo: header })
    const update = this.recordMessage(to, message, [from.userId])
    this.push(
      to,
      short && !media
        ? new Api.UpdateShortMessage({ id, userId: bigInt(from.userId), message: text, pts: update.pts, ptsCount: 1, date, replyTo: header })
        : new Api.Updates({ updates: [update], users: [this.userAs(to.userId, from)], chats: [], date, seq: 0 })
    )
    return id
  }

  /** `reader` read what `owner` sent them up to `maxId`. */
  readOutbox(reader: BetaAccount, owner: BetaAccount, maxId: number): void {
    owner.readOutbox.set(reader.userId, Math.max(maxId, owner.readOutbox.get(reader.userId) ?? 0))
    const update = owner.box.record(
      (pts) => new Api.UpdateReadHistoryOutbox({ peer: this.peerOf(reader), maxId, pts, ptsCount: 1 }),
      this.nowS(),
      [reader.userId],
      this.updates.logMax
    )
    this.push(owner, new Api.UpdateShort({ update, date: this.nowS() }))
  }

  /** A message in `a`'s chats: kept in its history and recorded as a pts event. */
  private recordMessage(a: BetaAccount, message: Api.Message, userIds: string[]): Api.UpdateNewMessage {
    a.history.push(message)
    if (a.history.length > this.updates.logMax) a.history.splice(0, a.history.length - this.updates.logMax)
    const update = a.box.record((pts) => new Api.UpdateNewMessage({ message, pts, ptsCount: 1 }), message.date, userIds, this.updates.logMax)
    if (!(update instanceof Api.UpdateNewMessage)) throw new Error('sim beta: a message recorded as another update')
    return update
  }

  peerOf(a: BetaAccount): Api.PeerUser {
    return new Api.PeerUser({ userId: bigInt(a.userId) })
  }

  /**
   * Delivers to the sessions of the account connected now; nothing is kept for the others (they ask for the
   * difference). `updates` may be built on demand: most people writing in the simulator have no session to see their
   * own message, and building it for no one was a share of the data centre's CPU in a burst.
   */
  push(a: BetaAccount, updates: Api.TypeUpdates | (() => Api.TypeUpdates)): void {
    if (a.withhold > 0) {
      a.withhold -= 1
      return
    }
    let built: Api.TypeUpdates | undefined
    for (const k of this.liveSessions(a)) {
      const listener = k.duplicated ? undefined : this.listeners.get(k.id)
      if (!listener) continue
      built ??= typeof updates === 'function' ? updates() : updates
      listener(built)
    }
  }

  private storeMedia(file: BetaFile & { voiceNote: boolean }): Api.TypeMessageMedia {
    const id = bigInt(randomBytes(6).readUIntBE(0, 6).toString())
    const accessHash = bigInt(randomBytes(6).readUIntBE(0, 6).toString())
    const fileReference = randomBytes(8)
    const type = file.contentType.split(';')[0]!.trim().toLowerCase()
    const photo = (type === 'image/jpeg' || type === 'image/png') && !file.fileName
    this.files.set(id.toString(), { ...file, id, accessHash, kind: photo ? 'photo' : 'document' })
    if (photo) {
      return new Api.MessageMediaPhoto({
        photo: new Api.Photo({
          id,
          accessHash,
          fileReference,
          date: this.nowS(),
          sizes: [new Api.PhotoSize({ type: 'y', w: 1280, h: 960, size: file.bytes.length })],
          dcId: 2,
        }),
      })
    }
    const attributes: Api.TypeDocumentAttribute[] = []
    if (file.voiceNote || type.startsWith('audio/')) attributes.push(new Api.DocumentAttributeAudio({ voice: file.voiceNote, duration: 3 }))
    else if (type.startsWith('video/')) attributes.push(new Api.DocumentAttributeVideo({ duration: 3, w: 640, h: 480 }))
    if (file.fileName) attributes.push(new Api.DocumentAttributeFilename({ fileName: file.fileName }))
    return new Api.MessageMediaDocument({
      document: new Api.Document({ id, accessHash, fileReference, date: this.nowS(), mimeType: type, size: bigInt(file.bytes.length), dcId: 2, attributes }),
      voice: file.voiceNote,
    })
  }

  mediaUrl(key: string): string {
    return `${this.mediaOrigin}/sim/media/beta/${key}`
  }

  // ── what a client's requests do ──────────────────────────────────────────────────────────────────────────────

  /** One TL request on `keyId`; `ref` names the gateway message a send is for (the simulator's client passes it). */
  async handle(keyId: string, request: Api.AnyRequest, ref: string | null = null): Promise<unknown> {
    const k = this.keys.get(keyId)
    if (!k) throw new Error('sim beta: a request on a key that was never opened')
    const rpc = (message: string, code = 400) => rpcError(message, code, request)
    if (k.duplicated) throw rpc('AUTH_KEY_DUPLICATED', 406)
    if (k.revoked) throw rpc('AUTH_KEY_UNREGISTERED', 401)
    const scripted = this.scriptedError(k, request.className)
    if (scripted) throw rpc(scripted.message, scripted.code)
    const checkApp = (apiId: number, apiHash: string) => {
      if (apiId !== this.opts.creds.apiId || apiHash !== this.opts.creds.apiHash) throw rpc('API_ID_INVALID')
    }

    if (request instanceof Api.auth.SendCode) {
      checkApp(request.apiId, request.apiHash)
      const phone = upstreamPhoneToE164(request.phoneNumber)
      if (!phone) throw rpc('PHONE_NUMBER_INVALID')
      if (this.accounts.get(phone)?.banned) throw rpc('PHONE_NUMBER_BANNED')
      const hash = `h${++this.codeSeq}${randomBytes(6).toString('hex')}`
      const code = String(10000 + ((this.codeSeq * 7919 + randomBytes(2).readUInt16BE(0)) % 89999))
      const expiresAt = this.now() + this.timing.codeMs
      // Only one code is good at a time: a new one replaces the last (beta resends invalidate the old code).
      for (const [h, c] of this.codes) if (c.phone === phone) this.codes.delete(h)
      this.codes.set(hash, { phone, code, expiresAt })
      this.codesReceived.set(phone, { code, expiresAt })
      return new Api.auth.SentCode({ type: new Api.auth.SentCodeTypeApp({ length: 5 }), phoneCodeHash: hash, timeout: Math.round(this.timing.codeMs / 1000) })
    }
    if (request instanceof Api.auth.SignIn) {
      const pending = this.codes.get(request.phoneCodeHash)
      const phone = upstreamPhoneToE164(request.phoneNumber)
      if (!pending || pending.phone !== phone) throw rpc('PHONE_CODE_HASH_EMPTY')
      if (!request.phoneCode) throw rpc('PHONE_CODE_EMPTY')
      if (this.now() >= pending.expiresAt) throw rpc('PHONE_CODE_EXPIRED')
      if (request.phoneCode !== pending.code) throw rpc('PHONE_CODE_INVALID')
      this.codes.delete(request.phoneCodeHash)
      this.codesReceived.delete(phone)
      const a = this.lookup(phone)
      if (!a) throw rpc('PHONE_NUMBER_UNOCCUPIED')
      if (a.banned) throw rpc('PHONE_NUMBER_BANNED')
      if (a.password) {
        k.passwordPendingFor = a.userId
        throw rpc('SESSION_PASSWORD_NEEDED', 401)
      }
      return this.authorize(k, a)
    }
    if (request instanceof Api.account.GetPassword) {
      const a = this.byUserId(k.passwordPendingFor ?? k.userId ?? '')
      if (!a) throw rpc('AUTH_KEY_UNREGISTERED', 401)
      if (!a.password)
        return new Api.account.Password({
          hasPassword: false,
          newAlgo: new Api.PasswordKdfAlgoUnknown(),
          newSecureAlgo: new Api.SecurePasswordKdfAlgoUnknown(),
          secureRandom: randomBytes(32),
        })
      return this.srp.challenge(a.userId, a.password, a.hint)
    }
    if (request instanceof Api.auth.CheckPassword) {
      if (!k.passwordPendingFor) throw rpc('PASSWORD_REQUIRED')
      const owner = this.srp.verify(request.password)
      if (owner !== k.passwordPendingFor) throw rpc('PASSWORD_HASH_INVALID')
      return this.authorize(k, this.byUserId(owner)!)
    }
    if (request instanceof Api.auth.ExportLoginToken) {
      checkApp(request.apiId, request.apiHash)
      const accepted = this.tokens.find((t) => t.key === k.id && t.acceptedBy !== null)
      if (accepted) {
        const a = this.byUserId(accepted.acceptedBy!)!
        if (a.dc !== k.dc) return new Api.auth.LoginTokenMigrateTo({ dcId: a.dc, token: accepted.token })
        return this.finishQr(k, accepted, a, rpc)
      }
      const token: Token = { key: k.id, token: randomBytes(32), expiresAt: this.nowS() + Math.max(1, Math.round(this.timing.qrMs / 1000)), acceptedBy: null }
      this.tokens.push(token)
      return new Api.auth.LoginToken({ token: token.token, expires: token.expiresAt })
    }
    if (request instanceof Api.auth.ImportLoginToken) {
      const t = this.tokens.find((x) => x.token.equals(Buffer.from(request.token)))
      if (!t?.acceptedBy) throw rpc('AUTH_TOKEN_INVALID')
      const a = this.byUserId(t.acceptedBy)!
      // The import must come from the account's own data center (core.telegram.org/api/qr-login).
      if (a.dc !== k.dc) throw rpc(`USER_MIGRATE_${a.dc}`, 303)
      return this.finishQr(k, t, a, rpc)
    }

    const me = k.userId ? this.byUserId(k.userId) : null
    if (!me) throw rpc('AUTH_KEY_UNREGISTERED', 401)
    if (me.banned) throw rpc('USER_DEACTIVATED_BAN', 401)
    if (request instanceof Api.auth.LogOut) {
      this.keys.delete(k.id)
      this.listeners.delete(k.id)
      return new Api.auth.LoggedOut({})
    }
    if (request instanceof Api.users.GetUsers) {
      if (!request.id.every((i) => i instanceof Api.InputUserSelf)) throw rpc('USER_ID_INVALID')
      return [this.userAs(me.userId, me)]
    }
    if (request instanceof Api.updates.GetState) return me.box.state(this.nowS())
    if (request instanceof Api.updates.GetDifference)
      return me.box.difference(request, this.nowS(), this.updates, (ids) => ids.flatMap((id) => this.usersAs(me, [id])))
    if (request instanceof Api.messages.GetDialogs) return this.dialogs(me, request)
    if (request instanceof Api.messages.GetHistory) return this.chatHistory(me, request, rpc)
    if (request instanceof Api.contacts.GetContacts) {
      const hash = contactsHash(0, me.contacts)
      if (!request.hash.isZero() && request.hash.equals(hash)) return new Api.contacts.ContactsNotModified()
      const users = me.contacts.map((id) => this.userAs(me.userId, this.byUserId(id)!))
      return new Api.contacts.Contacts({ contacts: users.map((u) => new Api.Contact({ userId: u.id, mutual: false })), savedCount: 0, users })
    }
    if (request instanceof Api.upload.SaveFilePart || request instanceof Api.upload.SaveBigFilePart) {
      const parts = this.uploads.get(`${k.id}:${request.fileId.toString()}`) ?? []
      parts[request.filePart] = Buffer.from(request.bytes)
      this.uploads.set(`${k.id}:${request.fileId.toString()}`, parts)
      return true
    }
    if (request instanceof Api.upload.GetFile) return this.getFile(request, rpc)
    const action = betaChatAction(this, me, request, rpc)
    if (action !== undefined) return action
    if (request instanceof Api.messages.SendMessage) {
      const to = this.recipient(me, request.peer, rpc)
      const { entry, own } = this.send(me, to, request.message, null, ref, request.randomId)
      entry.replyTo = quotedId(request.replyTo)
      return new Api.UpdateShortSentMessage({ out: true, id: entry.id, pts: own.pts, ptsCount: 1, date: Math.floor(entry.sentAt / 1000) })
    }
    if (request instanceof Api.messages.SendMedia) {
      const to = this.recipient(me, request.peer, rpc)
      const { entry, own } = this.send(me, to, request.message, () => this.takeUpload(k, request.media, rpc), ref, request.randomId)
      entry.replyTo = quotedId(request.replyTo)
      return new Api.Updates({
        updates: [new Api.UpdateMessageID({ id: entry.id, randomId: request.randomId }), own],
        users: [],
        chats: [],
        date: Math.floor(entry.sentAt / 1000),
        seq: 0,
      })
    }
    throw rpc('METHOD_NOT_SIMULATED')
  }

  /** An error the control API scripted for the next call of this method by the key's account, taken once. */
  private scriptedError(k: AuthKey, method: string): { message: string; code: number } | null {
    const owner = k.userId ? this.byUserId(k.userId) : k.phone ? (this.accounts.get(`+${digitsOf(k.phone)}`) ?? null) : null
    const i = owner ? owner.scriptedErrors.findIndex((e) => e.method === method) : -1
    return i < 0 ? null : owner!.scriptedErrors.splice(i, 1)[0]!
  }

  private usersAs(viewer: BetaAccount, ids: string[]): Api.User[] {
    return ids.flatMap((id) => {
      const a = this.byUserId(id)
      return a ? [this.userAs(viewer.userId, a)] : []
    })
  }

  /** A send by the account: the outbox entry, its own copy (a pts event, answered to the sending session) and the recipient's. */
  private send(
    me: BetaAccount,
    to: BetaAccount,
    text: string,
    takeFile: (() => BetaFile) | null,
    ref: string | null,
    randomId: bigInt.BigInteger | undefined
  ): { entry: BetaOutboxEntry; own: Api.UpdateNewMessage } {
    // A repeated random_id answers the send it made (its pts among it), and nothing new happens.
    const before = this.sentBefore(me, to, randomId)
    if (before?.own) return { entry: before, own: before.own }
    const file = takeFile ? takeFile() : null
    const entry = this.record(me, to, text, file, ref, randomId)
    const media = file ? this.storeMedia({ ...file, voiceNote: false }) : undefined
    const mine = new Api.Message({ id: entry.id, peerId: this.peerOf(to), date: Math.floor(entry.sentAt / 1000), message: text, out: true, media })
    const own = this.recordMessage(me, mine, [to.userId])
    entry.own = own
    this.deliver(me, to, text, media, false)
    return { entry, own }
  }

  /** messages.GetDialogs: one dialog per person, newest first, with its top message and how far they read ours. */
  private dialogs(me: BetaAccount, request: Api.messages.GetDialogs): Api.messages.TypeDialogs {
    const tops = new Map<string, Api.Message>()
    for (const m of me.history) if (m.peerId instanceof Api.PeerUser) tops.set(m.peerId.userId.toString(), m)
    const all = [...tops.entries()].sort((a, b) => b[1].date - a[1].date || b[1].id - a[1].id)
    const page = all.slice(0, Math.max(1, request.limit))
    const dialogs = page.map(
      ([userId, top]) =>
        new Api.Dialog({
          peer: new Api.PeerUser({ userId: bigInt(userId) }),
          topMessage: top.id,
          readInboxMaxId: 0,
          readOutboxMaxId: me.readOutbox.get(userId) ?? 0,
          unreadCount: 0,
          unreadMentionsCount: 0,
          unreadReactionsCount: 0,
          notifySettings: new Api.PeerNotifySettings({}),
        })
    )
    const body = {
      dialogs,
      messages: page.map(([, m]) => m),
      chats: [],
      users: this.usersAs(
        me,
        page.map(([id]) => id)
      ),
    }
    return page.length < all.length ? new Api.messages.DialogsSlice({ count: all.length, ...body }) : new Api.messages.Dialogs(body)
  }

  /** messages.GetHistory of a private chat: newest first, below `offsetId`/`maxId` and above `minId`. */
  private chatHistory(me: BetaAccount, request: Api.messages.GetHistory, rpc: (m: string, c?: number) => Error): Api.messages.Messages {
    const peer = request.peer
    if (!(peer instanceof Api.InputPeerUser)) throw rpc('PEER_ID_INVALID')
    const other = this.byUserId(peer.userId.toString())
    if (!other || peer.accessHash.toString() !== this.accessHash(me.userId, other.userId).toString()) throw rpc('PEER_ID_INVALID')
    const below = Math.min(request.offsetId > 0 ? request.offsetId : Infinity, request.maxId > 0 ? request.maxId : Infinity)
    const messages = me.history
      .filter((m) => m.peerId instanceof Api.PeerUser && m.peerId.userId.toString() === other.userId && m.id < below && m.id > request.minId)
      .reverse()
      .slice(0, Math.max(1, request.limit))
    return new Api.messages.Messages({ messages, chats: [], users: [this.userAs(me.userId, other)] })
  }

  private authorize(k: AuthKey, a: BetaAccount): Api.auth.Authorization {
    k.userId = a.userId
    k.passwordPendingFor = null
    k.phone = a.phone
    return new Api.auth.Authorization({ user: this.userAs(a.userId, a) })
  }

  private finishQr(k: AuthKey, t: Token, a: BetaAccount, rpc: (m: string, c?: number) => Error): Api.auth.LoginTokenSuccess {
    if (t.expiresAt * 1000 <= this.now()) throw rpc('AUTH_TOKEN_EXPIRED')
    this.tokens.splice(this.tokens.indexOf(t), 1)
    if (a.password) {
      k.passwordPendingFor = a.userId
      throw rpc('SESSION_PASSWORD_NEEDED', 401)
    }
    return new Api.auth.LoginTokenSuccess({ authorization: this.authorize(k, a) })
  }

  /**
   * The checks every send goes through: slow-down, the peer and its access hash, then the spam flag, which spares
   * mutual contacts (a spam-limited account may still write to people who have it in their address book too).
   */
  recipient(me: BetaAccount, peer: unknown, rpc: (m: string, c?: number) => Error): BetaAccount {
    const wait = Math.ceil((me.floodUntil - this.now()) / 1000)
    if (wait > 0) throw rpc(`FLOOD_WAIT_${wait}`, 420)
    if (!(peer instanceof Api.InputPeerUser)) throw rpc('PEER_ID_INVALID')
    const to = this.byUserId(peer.userId.toString())
    if (!to || peer.accessHash.toString() !== this.accessHash(me.userId, to.userId).toString()) throw rpc('PEER_ID_INVALID')
    const mutual = me.contacts.includes(to.userId) && to.contacts.includes(me.userId)
    if (me.stranger && !mutual) throw rpc('PEER_FLOOD')
    return to
  }

  /**
   * beta de-duplicates sends on random_id (core.telegram.org/api/updates, "random ID deduplication"): a send to the
   * same peer with a random_id the account used before answers the message that call made, and sends nothing new.
   */
  private sentBefore(me: BetaAccount, to: BetaAccount, randomId: bigInt.BigInteger | undefined): BetaOutboxEntry | null {
    if (randomId === undefined) return null
    return me.outbox.find((e) => e.toUserId === to.userId && e.randomId === randomId.toString()) ?? null
  }

  private record(
    me: BetaAccount,
    to: BetaAccount,
    text: string,
    file: BetaFile | null,
    ref: string | null,
    randomId: bigInt.BigInteger | undefined
  ): BetaOutboxEntry {
    const id = me.nextMessageId++
    const key = file ? `o${me.userId}-${id}` : null
    if (file && key) this.files.set(key, { ...file, id: bigInt.zero, accessHash: bigInt.zero, kind: 'document', voiceNote: false })
    const entry: BetaOutboxEntry = {
      id,
      messageId: ref,
      toUserId: to.userId,
      to: to.phone,
      text,
      file: file && key ? { ...file, key } : null,
      sentAt: this.now(),
      randomId: randomId?.toString() ?? null,
      own: null,
      replyTo: null,
    }
    me.outbox.push(entry)
    return entry
  }

  private takeUpload(k: AuthKey, media: Api.TypeInputMedia, rpc: (m: string, c?: number) => Error): BetaFile {
    const uploaded = media instanceof Api.InputMediaUploadedDocument || media instanceof Api.InputMediaUploadedPhoto ? media.file : null
    if (!(uploaded instanceof Api.InputFile || uploaded instanceof Api.InputFileBig)) throw rpc('MEDIA_INVALID')
    const key = `${k.id}:${uploaded.id.toString()}`
    const parts = this.uploads.get(key)
    if (!parts || parts.length !== uploaded.parts || parts.some((p) => p === undefined)) throw rpc('FILE_PARTS_INVALID')
    this.uploads.delete(key)
    const name = uploaded.name || null
    const contentType = media instanceof Api.InputMediaUploadedDocument ? media.mimeType : 'image/jpeg'
    return { contentType, fileName: name, bytes: Buffer.concat(parts) }
  }

  private getFile(request: Api.upload.GetFile, rpc: (m: string, c?: number) => Error): Api.upload.File {
    const loc = request.location
    const id = loc instanceof Api.InputDocumentFileLocation || loc instanceof Api.InputPhotoFileLocation ? loc.id.toString() : ''
    const file = this.files.get(id)
    if (!file || !(loc instanceof Api.InputDocumentFileLocation || loc instanceof Api.InputPhotoFileLocation) || !loc.accessHash.equals(file.accessHash))
      throw rpc('FILE_REFERENCE_INVALID')
    const offset = Number(request.offset.toString())
    if (request.limit <= 0 || request.limit > FILE_PART_MAX || offset % 1024 !== 0) throw rpc('LIMIT_INVALID')
    return new Api.upload.File({ type: new Api.storage.FileUnknown(), mtime: this.nowS(), bytes: file.bytes.subarray(offset, offset + request.limit) })
  }
}

/** What a file is served as (GET /sim/media/beta/{key}). */
export function servedFile(net: SimBetaNetwork, key: string): BetaFile | null {
  return net.files.get(key) ?? null
}
