/**
 * Renders a QR payload as a PNG data URL at the edge (the `qr_data_url` of spec 4.3 and the connect page). The
 * qrcode package computes the modules; the PNG is written here (1-bit grayscale, zlib via CompressionStream),
 * because the package's own PNG path needs Node streams or a canvas.
 */
import { create } from 'qrcode'

const SCALE_PX = 8
const QUIET_MODULES = 4

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream('deflate'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** The PNG bytes of the QR code for `text`: black modules on white, 8 px per module, a 4-module quiet zone. */
export async function qrPng(text: string): Promise<Uint8Array> {
  const { modules } = create(text, { errorCorrectionLevel: 'M' })
  const size = (modules.size + 2 * QUIET_MODULES) * SCALE_PX
  const rowBytes = Math.ceil(size / 8)
  const raw = new Uint8Array((rowBytes + 1) * size)
  for (let y = 0; y < size; y++) {
    const my = Math.floor(y / SCALE_PX) - QUIET_MODULES
    const row = y * (rowBytes + 1)
    raw[row] = 0 // filter: none
    for (let x = 0; x < size; x++) {
      const mx = Math.floor(x / SCALE_PX) - QUIET_MODULES
      const dark = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size && modules.get(my, mx)
      // 1-bit grayscale: 1 is white.
      if (!dark) raw[row + 1 + (x >> 3)]! |= 0x80 >> (x & 7)
    }
  }
  const header = new Uint8Array(13)
  const hv = new DataView(header.buffer)
  hv.setUint32(0, size)
  hv.setUint32(4, size)
  header.set([1, 0, 0, 0, 0], 8) // bit depth 1, grayscale, deflate, no filter, no interlace
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', await deflate(raw)),
    chunk('IEND', new Uint8Array()),
  ]
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    png.set(p, at)
    at += p.length
  }
  return png
}

export async function qrDataUrl(text: string): Promise<string> {
  const png = await qrPng(text)
  let s = ''
  for (const b of png) s += String.fromCharCode(b)
  return `data:image/png;base64,${btoa(s)}`
}
