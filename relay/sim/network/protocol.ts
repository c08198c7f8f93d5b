/**
 * The simulated network's device protocol: what a linked device (the sim driver) and the simulated servers say to
 * each other over a WebSocket. Close codes are 4000 + the status code the real upstream would use (401 logged out,
 * 403 banned, 408 link window over, 428 connection lost, 440 replaced by another session, 515 restart after pairing).
 */
import { z } from 'zod'

export const Device = z.object({ id: z.string().min(1).max(64), secret: z.string().min(1).max(128) })
export type Device = z.infer<typeof Device>

export const SimPeer = z.object({ phone: z.string().nullable(), lid: z.string().nullable(), name: z.string().nullable() })

export const SimMedia = z.object({
  url: z.string(),
  contentType: z.string(),
  fileName: z.string().nullable(),
  size: z.number().int().min(0),
  voiceNote: z.boolean(),
})
export type SimMedia = z.infer<typeof SimMedia>

const SimTo = z.object({ phone: z.string().nullable(), lid: z.string().nullable() })

export const ClientMsg = z.discriminatedUnion('t', [
  z.object({ t: z.literal('login'), phone: z.string().min(2).max(32), device: Device.nullable() }),
  z.object({ t: z.literal('pairing_code') }),
  z.object({ t: z.literal('ack'), ids: z.array(z.string()).min(1) }),
  z.object({
    t: z.literal('send'),
    id: z.string().min(1).max(128),
    messageId: z.string().min(1).max(128),
    to: z.object({ phone: z.string().nullable(), lid: z.string().nullable() }),
    text: z.string(),
    mediaUrl: z.string().nullable(),
    /** The message this one quotes (alpha's `quoted`): its network id and whether the account sent it. */
    quoted: z
      .object({ id: z.string().min(1), fromMe: z.boolean() })
      .nullable()
      .optional(),
  }),
  z.object({ t: z.literal('logout') }),
  /**
   * Chat actions (issue 25), each answered with `action_ack` or `action_error` by `rid`: a reaction ('' removes it),
   * `composing` presence, read receipts, and the on-network query for a number (alpha's `onWhatsApp`).
   */
  z.object({
    t: z.literal('react'),
    rid: z.string().min(1),
    to: SimTo,
    target: z.object({ id: z.string().min(1), fromMe: z.boolean() }),
    emoji: z.string().max(32),
  }),
  z.object({ t: z.literal('presence'), rid: z.string().min(1), to: SimTo, state: z.enum(['composing', 'paused']) }),
  z.object({ t: z.literal('read'), rid: z.string().min(1), to: SimTo, ids: z.array(z.string().min(1)).min(1) }),
  z.object({ t: z.literal('lookup'), rid: z.string().min(1), phone: z.string().min(2).max(32) }),
])
export type ClientMsg = z.infer<typeof ClientMsg>

/** A message a contact sent; `offline` when it waited for the device (delivered with the backlog at login). */
export const NetMessage = z.object({
  t: z.literal('message'),
  id: z.string(),
  from: SimPeer,
  text: z.string(),
  mediaUrl: z.string().nullable(),
  mediaType: z.string().nullable(),
  /** An attachment on the network's media server (like the real CDN): the device downloads it from `url`. */
  media: SimMedia.nullable().optional(),
  ts: z.number(),
  offline: z.boolean(),
  /** The network id of the message this one quotes (a reply; alpha's `contextInfo.stanzaId`). */
  replyTo: z.string().nullable().optional(),
})

/** A contact reacted to a message of the chat (alpha's `reactionMessage`); '' removed it. Kept until acknowledged. */
export const NetReaction = z.object({
  t: z.literal('reaction'),
  id: z.string(),
  from: SimPeer,
  target: z.string(),
  emoji: z.string(),
  ts: z.number(),
  offline: z.boolean(),
})

export const ServerMsg = z.discriminatedUnion('t', [
  z.object({ t: z.literal('qr'), ref: z.string(), expiresAt: z.number() }),
  z.object({ t: z.literal('pairing_code'), code: z.string().length(8), expiresAt: z.number() }),
  z.object({ t: z.literal('paired'), device: Device, me: z.object({ phone: z.string(), lid: z.string() }) }),
  z.object({ t: z.literal('open'), me: z.object({ phone: z.string(), lid: z.string() }) }),
  NetMessage,
  z.object({ t: z.literal('receipt'), rid: z.string(), id: z.string(), status: z.enum(['delivered', 'read']), offline: z.boolean().optional() }),
  /** Every message and receipt that waited for the device was sent (alpha's `<ib><offline count>`). */
  z.object({ t: z.literal('offline'), count: z.number().int().min(0) }),
  z.object({ t: z.literal('contacts'), contacts: z.array(SimPeer.extend({ hasChat: z.boolean() })) }),
  z.object({ t: z.literal('send_ack'), id: z.string() }),
  z.object({ t: z.literal('send_error'), id: z.string(), code: z.number().int(), reason: z.string() }),
  z.object({ t: z.literal('passkey_required') }),
  NetReaction,
  z.object({ t: z.literal('action_ack'), rid: z.string(), onNetwork: z.boolean().nullable().optional() }),
  z.object({ t: z.literal('action_error'), rid: z.string(), code: z.number().int(), reason: z.string() }),
  /**
   * The network's reach-out time lock (alpha's `fetchAccountReachoutTimelock` answer, pushed here when it changes):
   * while active the account may not start new chats (463 on a send to someone without a chat).
   */
  z.object({ t: z.literal('timelock'), active: z.boolean(), until: z.number().nullable() }),
])
export type ServerMsg = z.infer<typeof ServerMsg>

export const SIM_CLOSE = {
  /** The network lost the connection (Baileys: 428 connectionClosed); the device reconnects. */
  CONNECTION_LOST: 4428,
  LOGGED_OUT: 4401,
  BANNED: 4403,
  LINK_WINDOW_OVER: 4408,
  REPLACED: 4440,
  RESTART_REQUIRED: 4515,
} as const
