/**
 * What the fake data centre does with one API request: the wrappers every client puts around its calls are opened
 * (invokeWithLayer, initConnection, invokeAfterMsg, invokeWithoutUpdates: requests on one connection run in the order
 * they came, which is what invokeAfterMsg asks for), help.getConfig is answered by the data centre itself, and the rest
 * goes to the simulated network (beta-network.ts). Errors travel as beta's rpc_error (code and message); anything
 * else the network throws is a bug and answers 500 INTERNAL.
 */
import { Api } from 'telegram'
import { rpcWireForm, type SimBetaNetwork } from '../beta-network'

/** The data centre every simulated account lives in (beta's DC 2). */
export const SIM_DC_ID = 2

export type RpcOutcome = { ok: unknown } | { error: { code: number; message: string } }

/** The request inside the wrappers, and the app's api id when the call carried initConnection. */
export function unwrap(request: Api.AnyRequest): { request: Api.AnyRequest; apiId: number | null } {
  let apiId: number | null = null
  let r: unknown = request
  for (;;) {
    if (r instanceof Api.InvokeWithLayer || r instanceof Api.InvokeAfterMsg || r instanceof Api.InvokeWithoutUpdates) r = r.query
    else if (r instanceof Api.InitConnection) {
      apiId = r.apiId
      r = r.query
    } else break
  }
  if (!isRequest(r)) throw new Error('beta dc: a wrapper around something that is not a request')
  return { request: r, apiId }
}

export function isRequest(x: unknown): x is Api.AnyRequest {
  return typeof x === 'object' && x !== null && 'classType' in x && x.classType === 'request'
}

/** help.getConfig as beta answers it, with every data centre at this one's address. */
export function config(host: string, port: number, nowS: number): Api.Config {
  return new Api.Config({
    date: nowS,
    expires: nowS + 3600,
    testMode: false,
    thisDc: SIM_DC_ID,
    dcOptions: [1, 2, 3, 4, 5].map((id) => new Api.DcOption({ id, ipAddress: host, port })),
    dcTxtDomainName: 'apv3.stel.com',
    chatSizeMax: 200,
    megagroupSizeMax: 200_000,
    forwardedCountMax: 100,
    onlineUpdatePeriodMs: 210_000,
    offlineBlurTimeoutMs: 5_000,
    offlineIdleTimeoutMs: 30_000,
    onlineCloudTimeoutMs: 300_000,
    notifyCloudDelayMs: 30_000,
    notifyDefaultDelayMs: 1_500,
    pushChatPeriodMs: 60_000,
    pushChatLimit: 2,
    editTimeLimit: 172_800,
    revokeTimeLimit: 2_147_483_647,
    revokePmTimeLimit: 2_147_483_647,
    ratingEDecay: 2_419_200,
    stickersRecentLimit: 200,
    channelsReadMediaPeriod: 604_800,
    callReceiveTimeoutMs: 20_000,
    callRingTimeoutMs: 90_000,
    callConnectTimeoutMs: 30_000,
    callPacketTimeoutMs: 10_000,
    meUrlPrefix: 'https://t.me/',
    captionLengthMax: 1024,
    messageLengthMax: 4096,
    webfileDcId: 4,
  })
}

export async function runRequest(net: SimBetaNetwork, keyId: string, request: Api.AnyRequest, where: { host: string; port: number }): Promise<RpcOutcome> {
  try {
    const { request: inner } = unwrap(request)
    if (inner instanceof Api.help.GetConfig) return { ok: config(where.host, where.port, Math.floor(net.now() / 1000)) }
    return { ok: await net.handle(keyId, inner) }
  } catch (err) {
    const rpc = rpcWireForm(err)
    if (rpc) return { error: rpc }
    return { error: { code: 500, message: `INTERNAL: ${err instanceof Error ? err.message : String(err)}` } }
  }
}
