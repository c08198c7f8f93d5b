/**
 * beta's TL objects on the simulator's WebSocket: requests, results and updates travel as their real TL
 * serialisation (base64 in the JSON envelope), so both sides hold genuine `Api.*` objects and the client reads a
 * result the way GramJS does (`request.readResult`). Vectors and booleans, which have no class of their own, are
 * written as beta writes them.
 */
import { Api } from 'telegram'
import { BinaryReader } from 'telegram/extensions'

const VECTOR = 0x1cb5c415
const BOOL_TRUE = 0x997275b5
const BOOL_FALSE = 0xbc799737

function int32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n >>> 0, 0)
  return b
}

function bytesOf(value: unknown): Buffer {
  if (Array.isArray(value)) return Buffer.concat([int32(VECTOR), int32(value.length), ...value.map(bytesOf)])
  if (value === true) return int32(BOOL_TRUE)
  if (value === false) return int32(BOOL_FALSE)
  if (typeof value === 'object' && value !== null && 'getBytes' in value && typeof value.getBytes === 'function') {
    const out: unknown = value.getBytes()
    if (Buffer.isBuffer(out)) return out
  }
  throw new Error('beta wire: not a TL value')
}

export function encodeTl(value: unknown): string {
  return bytesOf(value).toString('base64')
}

function isRequest(x: unknown): x is Api.AnyRequest {
  return typeof x === 'object' && x !== null && 'classType' in x && x.classType === 'request'
}

export function decodeRequest(b64: string): Api.AnyRequest {
  const obj: unknown = new BinaryReader(Buffer.from(b64, 'base64')).tgReadObject()
  if (!isRequest(obj)) throw new Error('beta wire: not a request')
  return obj
}

/** The answer to `request`, read as GramJS reads it. */
export function decodeResult(request: Api.AnyRequest, b64: string): unknown {
  if (!('readResult' in request) || typeof request.readResult !== 'function') throw new Error('beta wire: not a request')
  const reader = new BinaryReader(Buffer.from(b64, 'base64'))
  return request.readResult(reader)
}

export function decodeUpdates(b64: string): Api.TypeUpdates {
  const obj: unknown = new BinaryReader(Buffer.from(b64, 'base64')).tgReadObject()
  if (
    obj instanceof Api.Updates ||
    obj instanceof Api.UpdateShort ||
    obj instanceof Api.UpdateShortMessage ||
    obj instanceof Api.UpdatesCombined ||
    obj instanceof Api.UpdatesTooLong ||
    obj instanceof Api.UpdateShortChatMessage ||
    obj instanceof Api.UpdateShortSentMessage
  )
    return obj
  throw new Error('beta wire: not an Updates object')
}
