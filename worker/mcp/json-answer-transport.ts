/**
 * The transport of one plain 2025-era request (plain-request.ts decides which, handler.ts routes it here): the SDK's
 * own `Transport` interface, handing the one request to the server and answering with its response as JSON. The SDK
 * still frames, dispatches, validates and answers errors; only the HTTP edge is this module.
 *
 * Why not the SDK's WebStandardStreamableHTTPServerTransport for these: by the time a request is plain, handler.ts
 * has made every check that transport makes (Accept, Content-Type, size, JSON, one message, not a batch, a request
 * with an id, a supported revision header, no session), and it makes them again with zod, which cannot compile its
 * checks in workerd: parsing the message against the JSON-RPC union, testing it as an initialize request and as a
 * request, and testing each outgoing message as a result and as an error, three times each. In a CPU profile of
 * `npm run bench -- mcp --profile` its request handling and `send` were the two largest parts of the SDK's time per
 * tools/call. Anything not plain (initialize, notifications, `events/stream`, a malformed message, a modern
 * request) still goes to the SDK's transports.
 *
 * Same answers: a response to the request is the body of a 200 `application/json`, as the SDK's JSON mode sends it;
 * a notification or a server-to-client request meant for the caller has no way there in a JSON answer, and is
 * dropped, as the SDK's JSON mode drops it. test/worker/mcp/json-answer-transport.test.ts holds it to the SDK's
 * transport's answers for the same requests.
 */
import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo, Server, Transport } from '@modelcontextprotocol/server'

/** A JSON-RPC response as the SDK's JSON mode sends it: 200, `application/json`. */
export const jsonRpcAnswer = (message: unknown) => Response.json(message, { status: 200, headers: { 'Content-Type': 'application/json' } })

export class JsonAnswerTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  private answer: ((response: Response) => void) | undefined
  private readonly answered: Promise<Response>
  private closed = false

  constructor(private readonly request: JSONRPCRequest) {
    this.answered = new Promise((resolve) => {
      this.answer = resolve
    })
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const isAnswer = 'id' in message && message.id === this.request.id && ('result' in message || 'error' in message)
    if (!isAnswer || !this.answer) return
    this.answer(jsonRpcAnswer(message))
    this.answer = undefined
  }

  /** Hands the request to the connected server; its answer, once sent. */
  handle(httpRequest: Request): Promise<Response> {
    if (!this.onmessage) throw new Error('JsonAnswerTransport: no server is connected')
    this.onmessage(this.request, { request: httpRequest })
    return this.answered
  }
}

/** `server`'s answer to one plain request, as the body of a JSON response. */
export async function answerPlainRequest(server: Server, message: JSONRPCRequest, httpRequest: Request): Promise<Response> {
  const transport = new JsonAnswerTransport(message)
  await server.connect(transport)
  return transport.handle(httpRequest)
}
