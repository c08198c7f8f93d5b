/**
 * What one relay token may hold in the hub (issue 14 §2), so a leaked or misbehaving token cannot exhaust the one
 * RelayHubDO every relay shares. A well-behaved relay stays far below each: it keeps one link per process, lists only
 * the sessions it runs, and keeps at most SEND_WINDOW frames unanswered (relay/link/backoff.ts).
 */

/** Live WebSocket links per relay token (a process, a restart overlapping its old socket, a few spares). */
export const RELAY_LINKS_PER_TOKEN = 8
/** Sessions one hello may list; a longer hello closes the link (each unknown one costs a revoke frame). */
export const HELLO_SESSIONS_MAX = 10_000
/**
 * Inbound frames buffered per session while its previous batch commits. Past it a frame is neither buffered nor
 * acked: the relay sends it again after its ack timeout, which is the back-pressure (nothing is lost).
 */
export const INBOUND_BUFFER_MAX = 2_000
