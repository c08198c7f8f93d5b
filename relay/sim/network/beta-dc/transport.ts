/**
 * The TCP transports of the fake data centre, as beta's servers tell them apart by the first bytes a client sends
 * (core.telegram.org/mtproto/mtproto-transports): abridged (a single 0xef byte, then 1- or 4-byte lengths in words)
 * and full (no tag: length, sequence number and CRC32 around every packet), the two GramJS's TCP connections speak
 * (ConnectionTCPAbridged, and ConnectionTCPFull, its default in Node). What the server writes is framed by the
 * library's own packet codecs; what it reads is checked as strictly as beta does: a full-transport packet with a bad
 * CRC or an out-of-order sequence number ends the connection.
 */
import { crc32 } from 'telegram/Helpers'
import { AbridgedPacketCodec } from 'telegram/network/connection/TCPAbridged'
import { FullPacketCodec } from 'telegram/network/connection/TCPFull'

export type TransportKind = 'full' | 'abridged'

/** Packets larger than this end the connection (beta's limit is about 1 MB per message). */
const PACKET_MAX = 2 * 1024 * 1024

export class TransportError extends Error {}

/** Reads a client's byte stream into packets; `encode` frames the server's packets for the same transport. */
export class PacketStream {
  kind: TransportKind | null = null
  private buffer: Buffer = Buffer.alloc(0)
  private expectSeq = 0
  private writer: FullPacketCodec | AbridgedPacketCodec | null = null

  /** The complete packets `chunk` finished, in order. Throws TransportError on anything beta would hang up on. */
  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    if (!this.kind) {
      if (this.buffer.length < 1) return []
      if (this.buffer[0] === 0xef) {
        this.kind = 'abridged'
        this.buffer = this.buffer.subarray(1)
      } else {
        if (this.buffer.length < 4) return []
        const tag = this.buffer.readUInt32LE(0)
        // Intermediate (0xeeeeeeee), padded intermediate (0xdddddddd) and obfuscated streams are not played here:
        // GramJS's TCP connections never open with them.
        if (tag === 0xeeeeeeee || tag === 0xdddddddd) throw new TransportError('beta dc: the intermediate transport is not simulated')
        this.kind = 'full'
      }
      this.writer = this.kind === 'full' ? new FullPacketCodec(null) : new AbridgedPacketCodec(null)
    }
    const out: Buffer[] = []
    for (;;) {
      const packet = this.kind === 'full' ? this.nextFull() : this.nextAbridged()
      if (!packet) return out
      out.push(packet)
    }
  }

  encode(packet: Buffer): Buffer {
    if (!this.writer) throw new TransportError('beta dc: nothing to answer before the client spoke')
    return this.writer.encodePacket(packet)
  }

  private take(n: number): Buffer {
    const head = this.buffer.subarray(0, n)
    this.buffer = this.buffer.subarray(n)
    return head
  }

  private nextFull(): Buffer | null {
    if (this.buffer.length < 4) return null
    const length = this.buffer.readInt32LE(0)
    if (length < 12 || length > PACKET_MAX || length % 4 !== 0) throw new TransportError(`beta dc: bad full-transport length ${length}`)
    if (this.buffer.length < length) return null
    const frame = this.take(length)
    const seq = frame.readInt32LE(4)
    const crc = frame.readUInt32LE(length - 4)
    if (crc32(frame.subarray(0, length - 4)) !== crc) throw new TransportError('beta dc: CRC32 mismatch')
    if (seq !== this.expectSeq) throw new TransportError(`beta dc: packet sequence ${seq}, expected ${this.expectSeq}`)
    this.expectSeq += 1
    return frame.subarray(8, length - 4)
  }

  private nextAbridged(): Buffer | null {
    if (this.buffer.length < 1) return null
    let words = this.buffer[0]!
    let header = 1
    if (words >= 0x7f) {
      if (this.buffer.length < 4) return null
      words = this.buffer.readUIntLE(1, 3)
      header = 4
    }
    const length = words * 4
    if (length > PACKET_MAX) throw new TransportError(`beta dc: bad abridged length ${length}`)
    if (this.buffer.length < header + length) return null
    this.take(header)
    return this.take(length)
  }
}
