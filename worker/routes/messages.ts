/**
 * /v1/messages (spec 4.2): send (and its dry run, POST /messages/check: issue 25), list, long-poll wait, get one; the
 * archive (routes/message-archive.ts) is mounted here, before `/{id}`.
 */
import { createRoute } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { z } from 'zod'
import { SendCheck } from '../../schema/api/actions'
import { IdempotencyKeyHeader, MessagingError } from '../../schema/api/common'
import { ListMessagesQuery, Message, MessageIdParam, MessageList, SendAccepted, SendMessageBody, WaitQuery, WaitResult } from '../../schema/api/messages'
import type { AppEnv } from '../env'
import { accountStub } from '../lib/objects'
import { listAccounts } from '../db/accounts'
import { getMessage, latestSeq, listMessages } from '../db/messages'
import { seqHere } from '../db/cursor-maps'
import { placementReader } from '../db/placement'
import { ApiError } from '../errors'
import { decodeCursor, encodeCursor } from '../lib/cursor'
import { newId } from '../lib/ids'
import { checkSendRequest, refusalError } from '../messaging/send-check'
import { planSend, type SendRequest } from '../messaging/send-plan'
import { waitForInbound } from '../messaging/wait'
import { toWireMessage } from '../db/wire'
import { messageArchiveRoutes } from './message-archive'
import { mediaSigner, signMessages } from '../media/links-for'
import { noteAudit } from '../middleware/key-scope'
import { checkAccount } from '../safety/key-refusals'
import { holdMessage } from '../messaging/approvals'
import { accountAllowed } from '../safety/grant'
import { noteRateLimit } from '../lib/rate-limit-state'
import { secondsToNextUtcDay } from '../lib/time'
import { resourceApp } from '../validate'
import { rawJson } from '../lib/raw-json'

/** The account's daily send cap as a RateLimit policy on every answer the account's object gave (docs/api.md). */
export const DAILY_SENDS_POLICY = 'daily-sends'
const DAY_S = 86_400

export const messagesRoutes = resourceApp({
  to: 'invalid_recipient',
  text: 'invalid_text',
  media_url: 'invalid_media_url',
  account_id: 'invalid_account_id',
  limit: 'invalid_limit',
  direction: 'invalid_direction',
  before: 'invalid_cursor',
  cursor: 'invalid_cursor',
  timeout_s: 'invalid_timeout',
  reply_to: 'invalid_reply_to',
  dry_run: 'invalid_request',
})

// Before `/{id}`, or the archive would be looked up as the message "archive".
messagesRoutes.route('/archive', messageArchiveRoutes)

const json = (schema: typeof MessagingError, description: string) => ({ description, content: { 'application/json': { schema } } })
const errors = {
  400: json(MessagingError, 'Invalid request (error_code names the field: invalid_recipient, invalid_text, invalid_limit, …)'),
  401: json(MessagingError, 'Missing or invalid API key'),
  404: json(MessagingError, 'The API is not enabled for this account, or the named resource does not exist'),
}

/** The send's checks as the request states them (messaging/send-plan.ts), for the send and its dry run alike. */
function sendRequest(c: Context<AppEnv>, body: z.infer<typeof SendMessageBody>): SendRequest {
  return {
    env: c.env,
    db: c.var.db,
    tenant: c.get('tenant'),
    grant: c.get('key'),
    requestUrl: c.req.url,
    body,
    now: Date.now(),
    note: (n) => noteAudit(c, n),
  }
}

const SEND_REFUSALS = {
  403: json(
    MessagingError,
    "`account_suspended` (after an opener burst), `account_restricted`, or the key's `key_scope` (a read key; a reply key outside its window), `key_account`, `key_expired`"
  ),
  409: json(MessagingError, '`no_connected_account`, `account_not_connected`, or `idempotency_key_in_progress` (with Retry-After)'),
  422: json(
    MessagingError,
    '`contact_channel_mismatch`, `contact_do_not_disturb`, `contact_opted_out`, `contact_private`, `beta_requires_existing_contact`, or `idempotency_key_reused`; `invalid_reply_to` or `unsupported_on_channel` for a `reply_to` (extension)'
  ),
  429: json(
    MessagingError,
    '`daily_send_cap`, `new_contact_cap`, `loop_guard` or `opener_burst`; `account_at_risk` while a ban-risk signal is in force (extension)'
  ),
}

const DRY_RUN_TEXT = [
  'A dry run (`dry_run: true` here, or POST /messages/check) runs every check of a send in the same code: caps, new-contact',
  "allowance, warm-up day, loop guard, opt-out and do-not-disturb, the 24 h window, the key's scope and approval, the",
  'quoted message, and answers 200 with a `SendCheck`: `would_send`, `would_queue_for_approval`, or `would_fail` with the',
  'exact error the send would get, plus what is left today. Nothing is sent, stored or counted, and no audit entry is written.',
].join(' ')

messagesRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/',
    operationId: 'send_message',
    tags: ['Messages'],
    summary: 'Send a message',
    description: [
      'Queues a message from one of the user’s accounts to a person (address a reply by the contact id of their message); check delivery with get_message. Only message people who wrote first or whom the user asked you to contact; the service refuses beyond 50 sends and 10 new contacts per account per UTC day and after 3 messages to one person who has not replied (loop_guard).',
      [
        'Queues a message from one of your accounts; read its status with GET /messages/{id}.',
        'Limits that protect your number are enforced and cannot be switched off: 50 sends per account and UTC day',
        '(`daily_send_cap`), 10 new contacts per UTC day (`new_contact_cap`; a new contact is someone who never wrote to',
        'the account and was never messaged by it; replies never count), 3 messages to one person since their last',
        'message (`loop_guard`), and the same first message to more than 5 never-written people within 30 minutes',
        '(`opener_burst`, which suspends sending until the service reviews it). An alpha number warms up: 0 new contacts',
        'on its first two active days, then one more per day up to the cap. `media_url` must be a public https URL',
        '(private, loopback, link-local and internal addresses are refused). Daily-limit refusals carry `retry_after_s`,',
        'the seconds until the next UTC day. A refused send changes no counter.',
        'A `reply` key may send only to people who wrote to the account within its reply window (default 24 h); a key with',
        'approval on holds a send to someone who never wrote as `awaiting_approval` until the owner decides (docs/agent-safety.md).',
        'Extensions (docs/api.md): `reply_to` quotes a message of the same account and person; while the network reports a',
        'ban-risk signal (GET /accounts `risk`) new contacts are refused with `account_at_risk` (a beta `flood_wait` only delays sends).',
      ].join(' '),
      DRY_RUN_TEXT,
    ].join('\n\n'),
    request: { headers: IdempotencyKeyHeader, body: { required: true, content: { 'application/json': { schema: SendMessageBody } } } },
    responses: {
      200: { description: 'A dry run (`dry_run: true`): what the send would do', content: { 'application/json': { schema: SendCheck } } },
      202: {
        description: 'Queued (or, for a key with approval on and a person who never wrote, `awaiting_approval`)',
        content: { 'application/json': { schema: SendAccepted } },
      },
      ...errors,
      ...SEND_REFUSALS,
    },
  }),
  async (c) => {
    const body = c.req.valid('json')
    const request = sendRequest(c, body)
    if (body.dry_run) return c.json(await checkSendRequest(request), 200)
    const plan = await planSend(request)
    const { tenant, account, contact } = plan
    const messageId = newId('msg')
    noteAudit(c, { messageId })
    const { known: _known, lastInboundAt: _lastInboundAt, ...recipient } = contact
    const replyTo = body.reply_to ?? null
    if (plan.hold) {
      const { hasInbound: _, ...seed } = recipient
      await holdMessage(
        c.env,
        request.db,
        c.req.url,
        {
          tenantId: tenant.id,
          account,
          contact: seed,
          grant: request.grant,
          messageId,
          text: body.text,
          mediaUrl: plan.mediaUrl,
          mediaContentType: plan.mediaContentType,
          replyTo,
        },
        Date.now()
      )
      noteAudit(c, { code: 'awaiting_approval' })
      return c.json({ message_id: messageId, status: 'awaiting_approval' as const }, 202)
    }
    const outcome = await accountStub(c.env, tenant.id, account.id).send({
      ref: { tenantId: tenant.id, accountId: account.id, channel: account.channel },
      tenant: { plan: tenant.plan, suspended: tenant.status === 'suspended' },
      messageId,
      contact: recipient,
      text: body.text,
      mediaUrl: plan.mediaUrl,
      mediaContentType: plan.mediaContentType,
      replyTo,
    })
    noteRateLimit(c, {
      policy: DAILY_SENDS_POLICY,
      quota: outcome.sendsToday.cap,
      windowS: DAY_S,
      remaining: Math.max(0, outcome.sendsToday.cap - outcome.sendsToday.used),
      resetS: secondsToNextUtcDay(Date.now()),
    })
    if (!outcome.ok) throw refusalError(outcome.refusal)
    return c.json({ message_id: outcome.messageId, status: 'queued' as const }, 202)
  }
)

messagesRoutes.openapi(
  createRoute({
    method: 'post',
    path: '/check',
    operationId: 'check_send',
    tags: ['Messages'],
    summary: 'Check a send',
    description: [
      'Asks whether a send would go through without sending it: answers would_send, would_queue_for_approval, or would_fail with the exact error, plus the sends and new contacts left today. Takes the same body as send_message; nothing is sent, stored or counted.',
      DRY_RUN_TEXT,
    ].join('\n\n'),
    request: { body: { required: true, content: { 'application/json': { schema: SendMessageBody } } } },
    responses: {
      200: { description: 'What the send would do', content: { 'application/json': { schema: SendCheck } } },
      ...errors,
      403: json(MessagingError, 'The key may not send at all (`key_scope` for a read key, `key_expired`): refused like the send'),
    },
  }),
  async (c) => c.json(await checkSendRequest(sendRequest(c, c.req.valid('json'))), 200)
)

messagesRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'list_messages',
    tags: ['Messages'],
    summary: 'List messages',
    description: [
      'Lists past messages of both directions, newest first, 1 to 100 per page (default 50); pass next_cursor as before for the next page. Use it to read history, and wait_for_messages to listen for new messages.',
      'Messages of both directions, newest first. Pass `next_cursor` as `before` for the next page; it is null on the last page.',
    ].join('\n\n'),
    request: { query: ListMessagesQuery },
    responses: { 200: { description: 'A page of messages', content: { 'application/json': { schema: MessageList } } }, ...errors },
  }),
  async (c) => {
    const q = c.req.valid('query')
    const tenant = c.get('tenant')
    const before = q.before === undefined ? undefined : decodeCursor('list', q.before)
    const notACursor = () => new ApiError(400, 'invalid_cursor', 'before: not a cursor returned by GET /messages')
    if (before === null) throw notACursor()
    const beforeSeq =
      before && (await seqHere(c.var.db, tenant, 'messages', before, 'before', { placedAt: placementReader(c.env, tenant.id), refuse: notACursor }))
    const { rows, more } = await listMessages(c.var.db, {
      tenantId: tenant.id,
      accountId: q.account_id,
      accountIds: c.get('key').accounts ?? undefined,
      direction: q.direction,
      beforeSeq,
      limit: q.limit,
    })
    const last = rows.at(-1)
    const sign = mediaSigner(c.env, c.get('tenant').id, Date.now())
    return c.json(
      {
        messages: await signMessages(sign, rows.map(toWireMessage)),
        next_cursor: more && last ? encodeCursor('list', last.message.seq, tenant.placement) : null,
      },
      200
    )
  }
)

messagesRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/wait',
    operationId: 'wait_for_messages',
    tags: ['Messages'],
    summary: 'Wait for inbound messages',
    description: [
      'Listens for messages people send to the user: returns as soon as there are messages newer than cursor (oldest first, up to 50) or an empty list after timeout_s (0 to 55 s). Omit cursor on the first call to start from now, then always pass the returned cursor so nothing is missed or repeated; at most 2 waits may be open per account.',
      [
        'Long poll: answers as soon as at least one inbound message newer than `cursor` exists (up to 50, oldest first),',
        'or with an empty list after `timeout_s`. Without a cursor the wait starts from now. Pass the returned `cursor` to',
        'the next wait: no message is skipped or returned twice. Without `account_id` it covers all your accounts; a',
        'cursor belongs to the account filter it was issued for. At most 2 waits may be open per account (`wait_concurrency`);',
        'a slot frees when the wait returns or its client disconnects.',
      ].join(' '),
    ].join('\n\n'),
    request: { query: WaitQuery },
    responses: {
      200: { description: 'New inbound messages (possibly none) and the next cursor', content: { 'application/json': { schema: WaitResult } } },
      ...errors,
      429: json(MessagingError, '`wait_concurrency`: more than 2 open waits on one account'),
    },
  }),
  async (c) => {
    const q = c.req.valid('query')
    const tenant = c.get('tenant')
    const db = c.var.db
    // Both reads go out together: a wait without a cursor starts from now, and the wait path is latency-bound.
    const [accounts, now] = await Promise.all([listAccounts(db, tenant.id), q.cursor === undefined ? latestSeq(db, tenant.id) : null])
    const grant = c.get('key')
    const targets = (q.account_id === undefined ? accounts : accounts.filter((a) => a.id === q.account_id)).filter((a) => accountAllowed(grant, a.id))
    if (q.account_id !== undefined && targets.length === 0) throw new ApiError(404, 'account_not_found', `No account ${q.account_id} on this API key`)
    const after = q.cursor === undefined ? { seq: now ?? 0, placement: tenant.placement } : decodeCursor('wait', q.cursor)
    const notACursor = () => new ApiError(400, 'invalid_cursor', 'cursor: not a cursor returned by GET /messages/wait')
    if (after === null) throw notACursor()
    const afterSeq = await seqHere(db, tenant, 'messages', after, 'after', { placedAt: placementReader(c.env, tenant.id), refuse: notACursor })
    const place = { tenantId: tenant.id, placement: tenant.placement }
    const result = await waitForInbound(c.env, db, place, targets, afterSeq, q.timeout_s * 1000, c.req.raw.signal)
    const cursor = encodeCursor('wait', result.lastSeq, tenant.placement)
    // The object's wire-shaped JSON goes out as it came (messaging/wait.ts): no parse and re-serialisation.
    if ('messagesJson' in result) return rawJson<z.infer<typeof WaitResult>>(`{"messages":${result.messagesJson},"cursor":${JSON.stringify(cursor)}}`)
    return c.json({ messages: await signMessages(mediaSigner(c.env, tenant.id, Date.now()), result.messages), cursor }, 200)
  }
)

messagesRoutes.openapi(
  createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'get_message',
    tags: ['Messages'],
    summary: 'Get a message',
    description: [
      'Reads one message by id, including the delivery status of a message you sent (queued, sent, delivered, read or failed, with the reason in error).',
      'One message with its current status (queued, sent, delivered, read, failed, received) and error, if any.',
    ].join('\n\n'),
    request: { params: MessageIdParam },
    responses: { 200: { description: 'The message', content: { 'application/json': { schema: Message } } }, ...errors },
  }),
  async (c) => {
    const row = await getMessage(c.var.db, c.get('tenant').id, c.req.valid('param').id)
    if (!row) throw new ApiError(404, 'message_not_found', 'No such message on this API key')
    checkAccount(c.get('key'), row.message.accountId)
    const [message] = await signMessages(mediaSigner(c.env, c.get('tenant').id, Date.now()), [toWireMessage(row)])
    return c.json(message!, 200)
  }
)
