/**
 * What the sim driver's event handlers (handle-events.ts, login.ts) may do with a session; client.ts implements it.
 * In a module of its own so the handlers and the client do not import each other.
 */
import type { ConnectorEvents, ConnectorOptions, SessionState } from '../connector'
import type { SimActions } from './actions'
import type { ClientMsg, Device, ServerMsg } from './network/protocol'

/** What the event handlers may do with a session. */
export type SimSession = {
  opts: ConnectorOptions
  /** The connector's events, counted until the edge stored what they carry (a stop waits for that). */
  events: ConnectorEvents
  pairing: { requested: boolean }
  knownPeers: Set<string>
  /** Chat actions waiting for the network's answer. */
  actions: SimActions
  transmit(msg: ClientMsg): void
  /** Hands an acknowledged item over now, or holds it in the buffer while an offline backlog drains. */
  receive(offline: boolean, deliver: () => void): void
  /** The network says the offline backlog is through: what the buffer holds goes out. */
  offlineDone(): void
  /**
   * Keeps an acknowledged media message with the session until the edge stored it (its file is stored first, which
   * takes a while); resolves once durable with the release to call then.
   */
  keep(msg: Extract<ServerMsg, { t: 'message' }>): Promise<() => void>
  emit(s: SessionState): void
  saveCreds(device: Device): Promise<void>
  markOpen(): void
  settleSend(id: string, error: { code: number; reason: string } | null): void
  /** Linking cannot finish (passkey): stop without retrying. */
  giveUp(): void
}
