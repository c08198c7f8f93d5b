/**
 * The Graph API calls the page inbox makes (upstreams 5.1, 5.2, 5.4): the code and long-lived token exchanges, the
 * user's pages with their tokens and linked Instagram accounts, the page's app subscription, and the Send API.
 * Every answer is parsed with zod; a Graph error becomes a GraphError carrying Graph's code and subcode.
 */
import { z } from 'zod'
import { graphConfig } from '../../config'

/** The webhook fields the page subscribes the app to (upstreams 5.2). */
export const PAGE_FIELDS = ['messages', 'messaging_postbacks', 'message_deliveries', 'message_reads', 'message_echoes', 'message_reactions'] as const

/** Graph's "invalid or expired token" (upstreams 5.4): the connection needs the user to log in again. */
export const TOKEN_INVALID_CODE = 190
/** Graph's "sent outside of allowed window" (code 10, upstreams 5.4): the person's 24-hour window has closed. */
export const OUTSIDE_WINDOW_SUBCODE = 2018278
/** Graph's "the action attempted has been deemed abusive or is otherwise disallowed": a ban-risk signal (issue 25). */
export const POLICY_BLOCK_CODE = 368
/** Graph's rate limits (upstreams 5.4): calls exceeded, application or user request limit. */
export const RATE_LIMIT_CODES: readonly number[] = [4, 32, 613]

/** The Send API's sender actions (Page Messages reference): typing, the seen mark, and reacting to a message. */
export type SenderAction =
  | { action: 'typing_on' }
  | { action: 'mark_seen' }
  | { action: 'react'; mid: string; emoji: string }
  | { action: 'unreact'; mid: string }

const GraphErrorBody = z.object({
  error: z.object({ message: z.string(), type: z.string().optional(), code: z.number().int(), error_subcode: z.number().int().optional() }),
})

export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | null,
    readonly subcode: number | null,
    message: string
  ) {
    super(message)
  }

  get tokenInvalid(): boolean {
    return this.code === TOKEN_INVALID_CODE
  }
}

const TokenAnswer = z.object({ access_token: z.string().min(1), token_type: z.string().optional(), expires_in: z.number().optional() })

export const GraphPage = z.object({
  id: z.string(),
  name: z.string(),
  access_token: z.string().min(1),
  tasks: z.array(z.string()).optional(),
  instagram_business_account: z.object({ id: z.string(), username: z.string().optional() }).optional(),
})
export type GraphPage = z.infer<typeof GraphPage>

const PagesAnswer = z.object({ data: z.array(GraphPage), paging: z.object({ next: z.string().optional() }).optional() })
const SuccessAnswer = z.object({ success: z.boolean() })
const ProfileAnswer = z.object({ name: z.string().optional(), username: z.string().optional() })
const SendAnswer = z.object({ recipient_id: z.string().optional(), message_id: z.string() })
const SenderActionAnswer = z.object({ recipient_id: z.string().optional() })

/** At most this many pages of /me/accounts are read (25 pages each): more than anyone manages by hand. */
const MAX_PAGE_REQUESTS = 8

export type OutboundContent = { text: string } | { attachment: { type: 'image' | 'video' | 'audio' | 'file'; url: string } }

export class GraphClient {
  private readonly base: string

  constructor(
    env: Env,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init)
  ) {
    const c = graphConfig(env)
    this.base = `${c.apiUrl}/${c.version}`
  }

  private async call<S extends z.ZodType>(method: string, path: string, query: Record<string, string>, shape: S, body?: unknown): Promise<z.infer<S>> {
    const url = path.startsWith('http') ? new URL(path) : new URL(`${this.base}/${path}`)
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v)
    let res: Response
    try {
      res = await this.fetcher(url, {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    } catch (err) {
      throw new GraphError(0, null, null, `the Graph API could not be reached: ${err instanceof Error ? err.message : String(err)}`)
    }
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new GraphError(res.status, null, null, `the Graph API answered ${res.status} with a body that is not JSON`)
    }
    const error = GraphErrorBody.safeParse(parsed)
    if (error.success) throw new GraphError(res.status, error.data.error.code, error.data.error.error_subcode ?? null, error.data.error.message)
    if (!res.ok) throw new GraphError(res.status, null, null, `the Graph API answered ${res.status}`)
    const ok = shape.safeParse(parsed)
    if (!ok.success) throw new GraphError(res.status, null, null, `the Graph API answered an unexpected shape for ${method} ${path}`)
    return ok.data
  }

  /** The authorization code from the dialog → a short-lived user token; redirect_uri must match the dialog's. */
  exchangeCode(app: { appId: string; secret: string }, redirectUri: string, code: string) {
    return this.call('GET', 'oauth/access_token', { client_id: app.appId, client_secret: app.secret, redirect_uri: redirectUri, code }, TokenAnswer)
  }

  /** A short-lived user token → a long-lived one (about 60 days); Page tokens read with it do not expire. */
  longLivedToken(app: { appId: string; secret: string }, shortToken: string) {
    return this.call(
      'GET',
      'oauth/access_token',
      { grant_type: 'fb_exchange_token', client_id: app.appId, client_secret: app.secret, fb_exchange_token: shortToken },
      TokenAnswer
    )
  }

  /** The pages the user granted, each with its Page token and linked Instagram professional account. */
  async pages(userToken: string): Promise<GraphPage[]> {
    const out: GraphPage[] = []
    let next: string | undefined = 'me/accounts'
    for (let i = 0; next && i < MAX_PAGE_REQUESTS; i++) {
      const query: Record<string, string> =
        next === 'me/accounts' ? { fields: 'id,name,access_token,tasks,instagram_business_account{id,username}', access_token: userToken } : {}
      const answer: z.infer<typeof PagesAnswer> = await this.call('GET', next, query, PagesAnswer)
      out.push(...answer.data)
      next = answer.paging?.next
    }
    return out
  }

  async subscribe(pageId: string, pageToken: string): Promise<void> {
    const answer = await this.call(
      'POST',
      `${encodeURIComponent(pageId)}/subscribed_apps`,
      { subscribed_fields: PAGE_FIELDS.join(','), access_token: pageToken },
      SuccessAnswer
    )
    if (!answer.success) throw new GraphError(200, null, null, 'the page refused the app subscription')
  }

  async unsubscribe(pageId: string, pageToken: string): Promise<void> {
    await this.call('DELETE', `${encodeURIComponent(pageId)}/subscribed_apps`, { access_token: pageToken }, SuccessAnswer)
  }

  /**
   * The Send API, for the page and its linked Instagram account alike (same Page token, recipient id PSID or IGSID).
   * Always `RESPONSE`: the service sends only inside the 24-hour window and uses no message tag (spec 8).
   */
  send(pageId: string, pageToken: string, recipientId: string, content: OutboundContent, replyTo: string | null = null) {
    const message =
      'text' in content
        ? { text: content.text }
        : { attachment: { type: content.attachment.type, payload: { url: content.attachment.url, is_reusable: true } } }
    return this.call('POST', `${encodeURIComponent(pageId)}/messages`, { access_token: pageToken }, SendAnswer, {
      recipient: { id: recipientId },
      messaging_type: 'RESPONSE',
      message,
      // A quoted reply names the message it answers (issue 25; Page Messages `reply_to`).
      ...(replyTo ? { reply_to: { mid: replyTo } } : {}),
    })
  }

  /** A sender action (issue 25): no message, only `sender_action` and, for a reaction, its `payload`. */
  senderAction(pageId: string, pageToken: string, recipientId: string, a: SenderAction) {
    const payload =
      a.action === 'react' ? { payload: { message_id: a.mid, reaction: a.emoji } } : a.action === 'unreact' ? { payload: { message_id: a.mid } } : {}
    return this.call('POST', `${encodeURIComponent(pageId)}/messages`, { access_token: pageToken }, SenderActionAnswer, {
      recipient: { id: recipientId },
      sender_action: a.action,
      ...payload,
    })
  }

  /** A person's display name on the page (PSID) or the Instagram account (IGSID), read with the Page token. */
  async profileName(scopedId: string, pageToken: string, surface: 'page' | 'instagram'): Promise<string | null> {
    const fields = surface === 'instagram' ? 'name,username' : 'name'
    const answer = await this.call('GET', encodeURIComponent(scopedId), { fields, access_token: pageToken }, ProfileAnswer)
    return answer.name ?? answer.username ?? null
  }

  /** The login dialog address (Login for Business: `config_id` instead of `scope`, `response_type=code`). */
  static dialogUrl(env: Env, p: { appId: string; configId: string; redirectUri: string; state: string }): string {
    const c = graphConfig(env)
    const url = new URL(`${c.dialogUrl}/${c.version}/dialog/oauth`)
    url.searchParams.set('client_id', p.appId)
    url.searchParams.set('redirect_uri', p.redirectUri)
    url.searchParams.set('state', p.state)
    url.searchParams.set('config_id', p.configId)
    url.searchParams.set('response_type', 'code')
    return url.toString()
  }
}
