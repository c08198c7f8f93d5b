/**
 * The client: openapi-fetch typed by the generated `paths` (src/openapi.ts), with the API key and base URL set once.
 * `gw.api` is every operation of the OpenAPI document as openapi-fetch gives it (`{data, error, response}`);
 * `gw.call(...)` turns such a result into its data or throws the typed error of its family (errors.ts); the few
 * helpers below are the calls an agent makes all day (send, get, wait and the wait loop).
 */
import createClient, { type Client } from 'openapi-fetch'
import { errorFromResponse } from './errors.js'
import type { components, paths } from './openapi.js'
import { MessageStream, type StreamOptions } from './stream.js'

export type Schemas = components['schemas']
export type Message = Schemas['WireMessage']
export type SendMessageBody = Schemas['SendMessageBody']

export type GatewayOptions = {
  /** The gateway's origin (`https://gateway.example.com`) or its `/v1` URL. */
  baseUrl: string
  /** An API key (`svc_live_…`), sent as `Authorization: Bearer`. */
  apiKey: string
  /** Another fetch (tests, proxies, retries). */
  fetch?: (input: Request) => Promise<Response>
}

type Outcome<T> = { data: T; error?: never; response: Response } | { data?: never; error?: unknown; response: Response }

/** Data of a successful call, or the typed error of a failed one. */
export async function call<T>(pending: Promise<Outcome<T>>): Promise<NonNullable<T>> {
  const r = await pending
  // Every operation answers a JSON body on success; none answers null.
  if (!r.response.ok || r.data === undefined || r.data === null) throw await errorFromResponse(r.response, r.error)
  return r.data
}

/** `https://host` and `https://host/v1/` both become `https://host/v1`. */
export function apiBase(url: string): string {
  const trimmed = url.replace(/\/+$/, '')
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`
}

export function createGateway(opts: GatewayOptions) {
  const api: Client<paths> = createClient<paths>({
    baseUrl: apiBase(opts.baseUrl),
    headers: { Authorization: `Bearer ${opts.apiKey}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  })
  const wait = (query: { cursor?: string; account_id?: string; timeout_s?: number }, signal?: AbortSignal) =>
    call(api.GET('/messages/wait', { params: { query }, signal }))
  return {
    api,
    call,
    messages: {
      /**
       * Queues a message. Pass an `idempotencyKey` (one per message, e.g. `crypto.randomUUID()`) and send again with
       * the same key after a lost answer: the gateway sends once and answers the first answer (docs/idempotency.md).
       */
      send: async (body: Omit<SendMessageBody, 'dry_run'>, options: { idempotencyKey?: string } = {}) => {
        const answer = await call(
          api.POST('/messages', { body, params: { header: options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {} } })
        )
        // Only a body with `dry_run: true` gets the dry run's answer, and this helper never sends one (use `check`).
        if ('dry_run' in answer) throw new Error('the gateway answered a dry run to a send')
        return answer
      },
      /** What a send would do (every limit checked), without sending, storing or counting anything. */
      check: (body: Omit<SendMessageBody, 'dry_run'>) => call(api.POST('/messages/check', { body })),
      get: (id: string) => call(api.GET('/messages/{id}', { params: { path: { id } } })),
      wait,
      /** Every inbound message from now (or from `cursor`) on: `for await (const m of gw.messages.stream()) …`. */
      stream: (options: StreamOptions = {}) => new MessageStream<Message>((q, signal) => wait(q, signal), options),
    },
    accounts: { list: () => call(api.GET('/accounts')) },
    usage: { get: () => call(api.GET('/usage')) },
  }
}

export type Gateway = ReturnType<typeof createGateway>
