/**
 * Identifiers. Random ids carry a type prefix (`msg_`, `ten_`, …). Contact ids are derived from the address,
 * so creating the same contact twice (two racing sends, a re-pushed inbound message) yields the same row; an MCP
 * webhook subscription's id is derived from its subscription key the same way.
 */
import { randomBase62, sha256Hex } from './crypto'

export function newId(prefix: string, length = 22): string {
  return `${prefix}_${randomBase62(length)}`
}

export type ContactAddress = { kind: 'phone' | 'external' | 'social' | 'lid'; value: string }

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export async function contactIdFor(tenantId: string, accountId: string, address: ContactAddress): Promise<string> {
  return derivedId('con', [tenantId, accountId, address.kind, address.value])
}

/** `prefix_` + 22 base62 characters of the SHA-256 of the parts: the same parts always give the same id. */
export async function derivedId(prefix: string, parts: string[]): Promise<string> {
  const hex = await sha256Hex(parts.join('\u0000'))
  let n = BigInt(`0x${hex.slice(0, 32)}`)
  let out = ''
  while (out.length < 22) {
    out += BASE62[Number(n % 62n)]
    n /= 62n
  }
  return `${prefix}_${out}`
}
