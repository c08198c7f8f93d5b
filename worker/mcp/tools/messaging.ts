/** Tools for messages, accounts and usage (spec 4.1, 4.2): the receive-and-reply loop of an agent. */
import { ListMessagesQuery, MessageIdParam, SendMessageBody, WaitQuery } from '../../../schema/api/messages'
import { MediaIdParam } from '../../../schema/api/media'
import { mediaToolResult } from '../media-answer'
import { ACTS, READS, toolInput, type ToolSpec } from '../../lib/tool-spec'

export const messagingTools: ToolSpec[] = [
  {
    name: 'list_accounts',
    title: 'List accounts',
    description:
      "Call this first: lists the user's accounts (id, channel, status) with today's sends and new contacts against their caps. The id is the account_id other tools take.",
    input: toolInput({}),
    method: 'GET',
    path: '/accounts',
    hints: READS,
  },
  {
    name: 'wait_for_messages',
    title: 'Wait for inbound messages',
    description:
      'Listens for messages people send to the user: returns as soon as there are messages newer than cursor (oldest first, up to 50) or an empty list after timeout_s (0 to 55 s). Omit cursor on the first call to start from now, then always pass the returned cursor so nothing is missed or repeated; at most 2 waits may be open per account.',
    input: toolInput({ query: WaitQuery }),
    method: 'GET',
    path: '/messages/wait',
    hints: READS,
  },
  {
    name: 'send_message',
    title: 'Send a message',
    description:
      'Queues a message from one of the user’s accounts to a person (address a reply by the contact id of their message); check delivery with get_message. Only message people who wrote first or whom the user asked you to contact; the service refuses beyond 50 sends and 10 new contacts per account per UTC day and after 3 messages to one person who has not replied (loop_guard).',
    input: toolInput({ body: SendMessageBody }),
    method: 'POST',
    path: '/messages',
    hints: ACTS,
  },
  {
    name: 'get_message',
    title: 'Get a message',
    description:
      'Reads one message by id, including the delivery status of a message you sent (queued, sent, delivered, read or failed, with the reason in error).',
    input: toolInput({ path: MessageIdParam.shape }),
    method: 'GET',
    path: '/messages/{id}',
    hints: READS,
  },
  {
    name: 'list_messages',
    title: 'List messages',
    description:
      'Lists past messages of both directions, newest first, 1 to 100 per page (default 50); pass next_cursor as before for the next page. Use it to read history, and wait_for_messages to listen for new messages.',
    input: toolInput({ query: ListMessagesQuery }),
    method: 'GET',
    path: '/messages',
    hints: READS,
  },
  {
    name: 'get_media',
    title: 'Get media',
    description:
      'Fetches the media of a message by its media.id (photo, voice note, audio, video, document, sticker). Images come back as an image block, audio and voice notes as an audio block (up to 5 MiB); anything else as a summary, fetch it by media.url.',
    input: toolInput({ path: MediaIdParam.shape }),
    method: 'GET',
    path: '/media/{mediaId}',
    hints: READS,
    answer: (res, args) => mediaToolResult(res, typeof args.mediaId === 'string' ? args.mediaId : ''),
  },
  {
    name: 'get_usage',
    title: 'Get usage',
    description:
      "Today's (UTC) sends and new contacts against the plan caps, the account count, and whether sending is suspended; check it before a series of sends.",
    input: toolInput({}),
    method: 'GET',
    path: '/usage',
    hints: READS,
  },
]
