/**
 * One beta client's connection to the simulated network: opens the session on its auth key, runs each TL request
 * against the network (one at a time, in order, as an MTProto connection answers them) and pushes the account's
 * updates. RPC errors go back as code and message; anything else the network throws is a bug and answers 500.
 */
import { rpcWireForm, type SimBetaNetwork } from './beta-network'
import { decodeRequest, encodeTl } from './beta-wire'
import type { Conn } from './phone'
import type { ClientMsg } from './protocol'

type BetaMsg = Extract<ClientMsg, { t: 'beta_open' | 'beta_invoke' | 'beta_dc' }>

export class BetaConnection {
  private key: string | null = null
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly net: SimBetaNetwork,
    private readonly conn: Conn
  ) {}

  onMessage(msg: BetaMsg): void {
    this.queue = this.queue.then(() => this.run(msg)).catch(() => undefined)
  }

  onClose(): void {
    if (this.key) this.net.listen(this.key, null)
  }

  private async run(msg: BetaMsg): Promise<void> {
    if (msg.t === 'beta_open') {
      const key = this.net.openKey(msg.key, msg.phone)
      this.key = key.id
      this.conn.send({ t: 'beta_opened', key: key.id, dc: key.dc })
      this.net.listen(key.id, (updates) => this.conn.send({ t: 'beta_update', body: encodeTl(updates) }))
      return
    }
    if (!this.key) return this.conn.close(4400, 'beta_open first')
    if (msg.t === 'beta_dc') {
      this.net.switchDC(this.key, msg.dc)
      this.conn.send({ t: 'beta_result', id: msg.id, body: '' })
      return
    }
    try {
      const result = await this.net.handle(this.key, decodeRequest(msg.body), msg.ref)
      this.conn.send({ t: 'beta_result', id: msg.id, body: encodeTl(result) })
    } catch (err) {
      const rpc = rpcWireForm(err)
      if (rpc) this.conn.send({ t: 'beta_error', id: msg.id, code: rpc.code, message: rpc.message })
      else this.conn.send({ t: 'beta_error', id: msg.id, code: 500, message: `INTERNAL: ${err instanceof Error ? err.message : String(err)}` })
    }
  }
}
