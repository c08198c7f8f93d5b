/**
 * The server half of MTProto's service framing (core.telegram.org/mtproto/service_messages), for what the fake data
 * centre writes: TL values as beta serialises them (objects in the bytes of the library's own `getBytes`, written by
 * tl-writer.ts; vectors and booleans as beta writes them), `rpc_result` around an answer or an `rpc_error`, `gzip_packed` for large bodies, and
 * `msg_container` around several messages sent at once. GramJS reads all of them with its own core classes
 * (RPCResult, GZIPPacked, MessageContainer).
 */
import { gzipSync } from 'node:zlib'
import type bigInt from 'big-integer'
import { Api } from 'telegram'
import { serializeBytes } from 'telegram/tl'
import { toSignedLittleBuffer } from '../../../beta/tl-longs'
import { isTlObject, tlObjectBytes } from './tl-writer'

const VECTOR = 0x1cb5c415
const BOOL_TRUE = 0x997275b5
const BOOL_FALSE = 0xbc799737
const RPC_RESULT = 0xf35c6d01
const GZIP_PACKED = 0x3072cfa1
const MSG_CONTAINER = 0x73f1f8dc
/** Bodies longer than this go gzip_packed when that makes them smaller (beta compresses large answers and updates). */
const GZIP_OVER_BYTES = 512

function int32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n >>> 0, 0)
  return b
}

/** A TL value's bytes: an Api object, a vector of them, or a boolean (a method's result). */
export function tlBytes(value: unknown): Buffer {
  if (Array.isArray(value)) return Buffer.concat([int32(VECTOR), int32(value.length), ...value.map(tlBytes)])
  if (value === true) return int32(BOOL_TRUE)
  if (value === false) return int32(BOOL_FALSE)
  if (isTlObject(value)) return tlObjectBytes(value)
  throw new Error('beta dc: not a TL value')
}

/** `body`, or gzip_packed{body} when it is large and compresses. */
export function maybeGzip(body: Buffer): Buffer {
  if (body.length <= GZIP_OVER_BYTES) return body
  const packed = Buffer.concat([int32(GZIP_PACKED), serializeBytes(gzipSync(body))])
  return packed.length < body.length ? packed : body
}

export function rpcResult(reqMsgId: bigInt.BigInteger, result: { ok: unknown } | { error: { code: number; message: string } }): Buffer {
  const inner =
    'error' in result ? new Api.RpcError({ errorCode: result.error.code, errorMessage: result.error.message }).getBytes() : maybeGzip(tlBytes(result.ok))
  return Buffer.concat([int32(RPC_RESULT), toSignedLittleBuffer(reqMsgId, 8), inner])
}

export type OutMessage = { msgId: bigInt.BigInteger; seqNo: number; body: Buffer }

export function container(messages: OutMessage[]): Buffer {
  const parts = messages.map((m) => {
    const head = Buffer.alloc(8)
    head.writeInt32LE(m.seqNo, 0)
    head.writeInt32LE(m.body.length, 4)
    return Buffer.concat([toSignedLittleBuffer(m.msgId, 8), head, m.body])
  })
  return Buffer.concat([int32(MSG_CONTAINER), int32(messages.length), ...parts])
}
