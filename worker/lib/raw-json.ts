/**
 * A JSON answer whose body is already serialised: wire-shaped text a Durable Object wrote (the long-poll wait's
 * messages), sent as it is instead of being parsed and stringified again. Typed as the route's declared JSON
 * response so the OpenAPI route keeps its one description; the caller vouches that the text has that shape (it was
 * serialised from that very type in this Worker's code).
 */
import type { TypedResponse } from 'hono'

export function rawJson<T>(text: string): Response & TypedResponse<T, 200, 'json'> {
  const res: Response = new Response(text, { headers: { 'Content-Type': 'application/json' } })
  // The phantom fields of TypedResponse exist only in types; a Response is what Hono sends either way.
  return res as Response & TypedResponse<T, 200, 'json'>
}
