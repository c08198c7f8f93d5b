/**
 * The simulated network as a local server: the control API under /sim, the device endpoint /sim/ws alpha's sim driver
 * connects to, and beta's fake data centre (a TCP port of its own, beta-dc/) the real GramJS client connects to. Runs
 * in the relay process (`--sim` without RELAY_SIM_URL), on its own (network/main.ts), or inside a test or benchmark so
 * that relays can be killed while the "upstream" keeps its state.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import { BetaDataCentre } from './beta-dc/server'
import { DEFAULT_BETA_TIMING, type BetaTiming } from './beta-network'
import { handleControl } from './control-api'
import { DEFAULT_SIM_TIMING, SimNetwork, type SimTiming } from './network'
import type { Conn, SimPhone } from './phone'
import { ClientMsg } from './protocol'

/** The network's media server, like the real CDN: the attachment's bytes, once the device asks for them. */
function serveSimMedia(network: SimNetwork, url: string, res: ServerResponse): void {
  const path = url.split('?')[0]!
  const file = path.startsWith('/sim/media/beta/')
    ? network.beta.files.get(decodeURIComponent(path.slice('/sim/media/beta/'.length)))
    : network.mediaFiles.get(path.slice('/sim/media/'.length))
  if (!file) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such media"}')
  res.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.bytes.length) })
  res.end(file.bytes)
}

export type SimServer = { url: string; network: SimNetwork; dc: BetaDataCentre; close(): Promise<void> }

export async function startSimNetwork(
  opts: { host?: string; port?: number; timing?: Partial<SimTiming>; betaTiming?: Partial<BetaTiming> } = {}
): Promise<SimServer> {
  const network = new SimNetwork({ ...DEFAULT_SIM_TIMING, ...opts.timing }, { ...DEFAULT_BETA_TIMING, ...opts.betaTiming })
  const dc = new BetaDataCentre(network.beta, opts.host ?? '127.0.0.1')
  await dc.listen(0)
  const http = createServer((req, res) => {
    if ((req.url ?? '').startsWith('/sim/media/') && req.method === 'GET') return serveSimMedia(network, req.url ?? '', res)
    if ((req.url ?? '').startsWith('/sim')) return void handleControl(network, dc, req, res)
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found; the control API is under /sim"}')
  })
  // Longer than clients keep idle connections (undici: 4 s after the server's hint), so a large body never starts on a
  // socket the server is closing at that moment (an ECONNRESET seen with 60 MB attachment posts).
  http.keepAliveTimeout = 65_000
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })
  http.on('upgrade', (req, socket, head) => {
    if ((req.url ?? '').split('?')[0] !== '/sim/ws') return socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => {
      let bound: SimPhone | null = null
      const conn: Conn = {
        openedAt: Date.now(),
        send: (msg) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(msg)),
        close: (code, reason) => ws.close(code, reason),
      }
      ws.on('message', (data) => {
        const parsed = ClientMsg.safeParse(
          (() => {
            try {
              return JSON.parse(String(data))
            } catch {
              return null
            }
          })()
        )
        if (!parsed.success) return ws.close(4400, 'bad device message')
        bound = network.onDevice(conn, bound, parsed.data)
      })
      ws.on('close', () => network.onClose(conn, bound))
    })
  })
  await new Promise<void>((resolve) => http.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  network.mediaOrigin = `http://${opts.host ?? '127.0.0.1'}:${port}`
  network.beta.mediaOrigin = network.mediaOrigin
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    network,
    dc,
    close: async () => {
      await dc.close()
      await new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate()
        wss.close()
        http.closeAllConnections()
        http.close(() => resolve())
      })
    },
  }
}
