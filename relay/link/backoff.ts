/**
 * Reconnect and heartbeat timing of the link to the Worker, as named constants (partysocket style). Reconnects
 * back off exponentially with jitter so a fleet of relays does not reconnect in lockstep after an edge restart.
 */
export const MIN_RECONNECT_MS = 250
export const MAX_RECONNECT_MS = 10_000
export const RECONNECT_GROW = 2
/** A link that stayed up this long resets the backoff. */
export const MIN_UPTIME_MS = 5_000
export const CONNECT_TIMEOUT_MS = 5_000
/** Until the edge's welcome says otherwise. */
export const DEFAULT_HEARTBEAT_MS = 3_000
/** Missing pongs for this many heartbeat intervals means the link is dead: terminate and reconnect. */
export const HEARTBEAT_MISSES = 3
/** A reliable frame not acked this long is sent again (the edge de-duplicates). */
export const ACK_TIMEOUT_MS = 30_000
/** Reliable frames on the wire without an answer, at most (flow control; the rest wait in the outbox). */
export const SEND_WINDOW = 1024
/**
 * One batched message carries at most this much frame text (an edge may take 1 MiB per WebSocket message); a frame
 * longer than it goes alone, as it would without batches.
 */
export const BATCH_TEXT_MAX_CHARS = 256 * 1024
/** Sessions stop this long before the edge may hand them to another relay. */
export const LEASE_SAFETY_MS = 2_000

/** The delay before reconnect attempt `attempt` (1-based): capped exponential growth, then 50–100 % of it ("equal jitter"). */
export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_RECONNECT_MS, MIN_RECONNECT_MS * RECONNECT_GROW ** Math.max(0, attempt - 1))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}
