/**
 * GET /relay/connect: where relays dial in. The relay token (Authorization: Bearer) is checked here, before the
 * upgrade is forwarded to the RelayHubDO, so an unauthenticated socket never reaches it. Revoked or unknown tokens
 * are refused with 401.
 */
import { Hono } from 'hono'
import { database } from '../db/client'
import { relayForToken } from '../db/relays'
import type { AppEnv } from '../env'
import { ApiError } from '../errors'
import { RELAY_ID_HEADER, RELAY_TENANT_HEADER } from '../relay/hub-do'
import { relayHub } from '../lib/objects'

export const relayRoutes = new Hono<AppEnv>()

relayRoutes.get('/connect', async (c) => {
  const token = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization')?.trim() ?? '')?.[1]
  if (!token) throw new ApiError(401, 'unauthorized', 'A relay token is required (Authorization: Bearer rly_…)')
  const relay = await relayForToken(database(c.env.DB), token)
  if (!relay) throw new ApiError(401, 'unauthorized', 'The relay token is invalid or revoked')
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') throw new ApiError(426, 'upgrade_required', 'Connect with a WebSocket upgrade')
  // Headers the hub trusts are set here, replacing anything the client sent under the same names.
  const headers = new Headers(c.req.raw.headers)
  headers.set(RELAY_ID_HEADER, relay.id)
  headers.set(RELAY_TENANT_HEADER, relay.tenantId ?? '')
  headers.delete('authorization')
  return relayHub(c.env).fetch(new Request(c.req.raw.url, { method: 'GET', headers }))
})
