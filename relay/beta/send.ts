/**
 * Sending on beta, one message at a time per account so order holds: the recipient by peer id (with its access hash)
 * or by phone from the synced address book (§4.2: only existing contacts), media fetched through the relay's SSRF
 * guard and uploaded as bytes (upload.ts; never a URL, which beta's servers would fetch). Every send carries a
 * random_id derived from the gateway message id, so beta takes a retry of the same message as the same send.
 * A flood wait pauses the account: the same message goes again when the wait ends, then the rest, in order.
 * PEER_FLOOD (the account is spam-limited) fails that message and restricts the account, which may still write to
 * mutual contacts: the sends handed over before it fail with it (the gateway fails its queue when the account turns
 * restricted), later ones are tried, and the first that goes through lifts the restriction.
 */
import type { Logger } from 'pino'
import { Api } from 'telegram'
import { PermanentSendError, type OutboundMessage } from '../connector'
import type { FetchMedia } from '../alpha/media-fetch'
import { bareContentType, outboundFileName, sentMessageId } from './convert'
import { decodePeerId, inputPeer, isE164, randomIdFor, type PeerRef } from './ids'
import type { Outbox } from './outbox'
import type { PeerDirectory } from './peers'
import type { BetaClient } from './socket'
import { classifyError, PROBLEM_MESSAGES, type ErrorVerdict } from './state'
import { startUpload } from './upload'

export type SenderDeps = {
  client(): BetaClient | null
  peers: PeerDirectory
  outbox: Outbox
  fetchMedia: FetchMedia
  now(): number
  log: Logger
  /** Whether the address book has loaded (waiting a bounded while for it): a phone is judged only against a loaded book. */
  bookLoaded(): Promise<boolean>
  /** A flood wait began (or grew): the connector reports `slowed` until `until`. */
  onSlowed(until: number): void
  /** The pause is over and the next send goes now. */
  onResumed(): void
  /** The account cannot send any more (ban, logged out or its key duplicated). */
  onFatal(verdict: Extract<ErrorVerdict, { kind: 'banned' | 'logged_out' }>): void
  /** beta answered PEER_FLOOD: the account is restricted (stranger_flag) until a send goes through again. */
  onRestricted(): void
  /** A message was handed to beta: whatever restricted or paused the account is over. */
  onSent(): void
}

export type Sender = {
  send(m: OutboundMessage): Promise<{ upstreamId: string }>
  /** Sends stop for good (a ban): later sends fail at once with this reason. */
  block(reason: string): void
  readonly pausedUntil: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** What a message beta refused with PEER_FLOOD fails with (the code first, as the edge shows it). */
export const PEER_FLOOD_ERROR =
  'stranger_flag: beta refused this message (PEER_FLOOD): the account is limited for messaging people who do not know it and may only write to mutual contacts for now'
/** What a message waiting behind that refusal fails with: the gateway failed it too when the account turned restricted. */
export const PEER_FLOOD_QUEUED_ERROR =
  'stranger_flag: not sent: beta limited this account (PEER_FLOOD) while the message waited; send it again, to a mutual contact'

export function makeSender(deps: SenderDeps): Sender {
  let chain: Promise<unknown> = Promise.resolve()
  let pausedUntil = 0
  let blocked: string | null = null
  /** Sends are numbered as they are handed over; those numbered up to this fail with PEER_FLOOD_QUEUED_ERROR. */
  let handedOver = 0
  let failUpTo = 0

  async function recipient(to: OutboundMessage['to']): Promise<PeerRef> {
    const byId = decodePeerId(to.peerId)
    if (byId) return byId
    const phone = to.phone && isE164(to.phone) ? to.phone : null
    const known = phone ? deps.peers.byPhone(phone) : null
    if (known) return known
    // Right after connecting the book may not have loaded yet: an empty directory proves nothing about the person.
    if (phone && !(await deps.bookLoaded())) throw new Error('beta: the address book has not loaded yet, so the phone cannot be looked up; try again')
    const found = phone ? deps.peers.byPhone(phone) : null
    if (found) return found
    throw new PermanentSendError('beta_requires_existing_contact: beta can message existing contacts only (the address book, or people who wrote)')
  }

  async function waitOutPause(): Promise<void> {
    if (pausedUntil <= deps.now()) return
    while (pausedUntil > deps.now()) await sleep(pausedUntil - deps.now())
    deps.onResumed()
  }

  async function deliver(m: OutboundMessage, seq: number): Promise<{ upstreamId: string }> {
    if (blocked) throw new PermanentSendError(blocked)
    if (seq <= failUpTo) throw new PermanentSendError(PEER_FLOOD_QUEUED_ERROR)
    const ref = await recipient(m.to)
    const peer = inputPeer(ref)
    const randomId = randomIdFor(m.messageId)
    const media = m.mediaUrl ? await deps.fetchMedia(m.mediaUrl) : null
    const upload = media
      ? startUpload({ name: outboundFileName(media.fileName, media.contentType), bytes: media.bytes, contentType: bareContentType(media.contentType) })
      : null
    // A quoted reply: beta takes the quoted message's id in this chat.
    const replyTo = m.replyTo ? new Api.InputReplyToMessage({ replyToMsgId: Number(m.replyTo.upstreamId) }) : undefined
    let uploadedAgain = false
    for (;;) {
      await waitOutPause()
      if (blocked) throw new PermanentSendError(blocked)
      const client = deps.client()
      if (!client) throw new Error('beta: the session is not connected')
      try {
        let answer: unknown
        if (upload) {
          await upload.sendParts(client)
          answer = await client.invoke(new Api.messages.SendMedia({ peer, media: upload.media(), message: m.text, randomId, replyTo }), m.messageId)
        } else answer = await client.invoke(new Api.messages.SendMessage({ peer, message: m.text, randomId, noWebpage: true, replyTo }), m.messageId)
        const id = sentMessageId(answer, randomId)
        // Sent, but the answer does not say as what: a retry of the same random_id gets beta's answer again.
        if (id === null) throw new Error('beta: the send was answered without the message it made')
        await deps.outbox.sent(ref.userId, id)
        deps.onSent()
        return { upstreamId: String(id) }
      } catch (err) {
        const v = classifyError(err)
        switch (v.kind) {
          case 'flood':
            pausedUntil = Math.max(pausedUntil, deps.now() + v.seconds * 1000)
            deps.log.warn({ seconds: v.seconds, message_id: m.messageId }, 'beta: flood wait; pausing sends')
            deps.onSlowed(pausedUntil)
            continue
          case 'stranger':
            failUpTo = handedOver
            deps.log.warn({ message_id: m.messageId }, 'beta: PEER_FLOOD; the account is restricted to mutual contacts')
            deps.onRestricted()
            throw new PermanentSendError(PEER_FLOOD_ERROR)
          case 'banned':
            blocked = PROBLEM_MESSAGES.blocked_by_beta
            deps.onFatal(v)
            throw new PermanentSendError(blocked)
          case 'logged_out':
            deps.onFatal(v)
            // Not the message's fault: the edge fails what is queued when the account leaves `connected`.
            throw new Error(`beta: ${v.kind}`)
          case 'refused':
            // Parts beta no longer has (a long pause between the upload and the send): upload once more.
            if (upload && !uploadedAgain && /^FILE_PART/.test(v.message)) {
              uploadedAgain = true
              upload.restart()
              continue
            }
            throw new PermanentSendError(`beta refused the message: ${v.message}`, v.code)
          case 'transient':
            throw new Error(`beta: ${v.message}`)
        }
      }
    }
  }

  return {
    send(m) {
      const seq = ++handedOver
      const next = chain.then(
        () => deliver(m, seq),
        () => deliver(m, seq)
      )
      chain = next.catch(() => undefined)
      return next
    },
    block(reason) {
      blocked = reason
    },
    get pausedUntil() {
      return pausedUntil
    },
  }
}
