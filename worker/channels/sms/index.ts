/**
 * The SMS channel (spec 4.5): the user's Twilio number and/or an Android phone running SMS Gateway for Android,
 * one `sms` account per E.164 number. No relay: the Worker talks to the providers directly.
 */
import { Hono } from 'hono'
import type { AppEnv } from '../../env'
import type { Channel } from '../contract'
import { smsCallbacks } from './callbacks'
import { smsMediaHeaders } from './inbound'
import { checkSmsSend, deliverSms, SMS_RETRY_FOR_MS } from './outbound'
import { smsRoutes } from './routes'
import { smsTools } from './tools'
import { SMS_PREFIX } from './urls'

export const smsChannel: Channel = {
  id: 'sms',
  path: 'sms',
  title: 'SMS',
  routes: smsRoutes,
  publicRoutes: new Hono<AppEnv>().route(SMS_PREFIX, smsCallbacks),
  // The phone's webhook route caps at GATEWAY_WEBHOOK_MAX_BYTES (callbacks.ts).
  ownBodyLimit: /^\/v1\/channels\/sms\/android-gateway\/[^/]+\/[^/]+\/events$/,
  tools: smsTools,
  address: 'phone',
  strangers: { allowed: true },
  warmUp: false,
  transport: 'direct',
  patience: { ms: SMS_RETRY_FOR_MS, error: 'the SMS provider did not take the message within an hour' },
  checkSend: checkSmsSend,
  deliver: deliverSms,
  mediaHeaders: smsMediaHeaders,
  // SMS has no quotes, reactions, typing or read marks (Twilio and the phone's gateway alike), and every number is "on" it.
  actions: { reply: false, react: false, typing: false, read: false, lookup: false },
}
