/**
 * A relay's WebSocket upgrade as the Worker hands it to the RelayHubDO (routes/relay.ts sets these headers after it
 * checked the relay token; hub-do.ts trusts them): constants only, so both sides import it.
 */

/** Headers the Worker route sets after checking the relay token; a client cannot reach the object directly. */
export const RELAY_ID_HEADER = 'x-gateway-relay-id'
export const RELAY_TENANT_HEADER = 'x-gateway-relay-tenant'
