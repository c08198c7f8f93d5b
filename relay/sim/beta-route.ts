/**
 * Where the simulator's beta client connects: GramJS dials the session's address on port 80 (443 with WSS) whatever
 * port the StringSession names, so the simulator hands it a socket class (the client's `networkSocket` option) that
 * is the library's own TCP socket, dialling the fake data centre's port instead. Everything above the socket (the
 * transport, MTProto, the client) is GramJS's unmodified code.
 */
import { PromisedNetSockets } from 'telegram/extensions'

export type DcAddress = { host: string; port: number }

export function routedSocket(address: () => DcAddress | Promise<DcAddress>): typeof PromisedNetSockets {
  return class RoutedNetSocket extends PromisedNetSockets {
    override async connect(_port: number, _ip: string) {
      const to = await address()
      return super.connect(to.port, to.host)
    }
  }
}
