/** The PNG written at the edge for qr_data_url: decoded here and compared module by module with the QR matrix. */
import { create } from 'qrcode'
import { describe, expect, it } from 'vitest'
import { qrDataUrl, qrPng } from '../../../worker/lib/qr-png'

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('deflate'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** Width, height and the concatenated IDAT payload of a PNG, checking every chunk's CRC-carrying layout. */
function chunks(png: Uint8Array) {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  let at = 8
  let width = 0
  let height = 0
  const idat: number[] = []
  const types: string[] = []
  while (at < png.length) {
    const len = view.getUint32(at)
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    types.push(type)
    const data = png.subarray(at + 8, at + 8 + len)
    if (type === 'IHDR') {
      width = view.getUint32(at + 8)
      height = view.getUint32(at + 12)
      expect([...data.subarray(8, 13)]).toEqual([1, 0, 0, 0, 0])
    }
    if (type === 'IDAT') idat.push(...data)
    at += 12 + len
  }
  return { width, height, idat: new Uint8Array(idat), types }
}

describe('qrPng', () => {
  it('draws exactly the modules of the QR matrix, 8 px each, inside a 4-module quiet zone', async () => {
    const text = '2@AbCdEfGhIjKlMnOp,15551234567,sim'
    const png = await qrPng(text)
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    const { width, height, idat, types } = chunks(png)
    expect(types).toEqual(['IHDR', 'IDAT', 'IEND'])
    const { modules } = create(text, { errorCorrectionLevel: 'M' })
    expect(width).toBe((modules.size + 8) * 8)
    expect(height).toBe(width)
    const raw = await inflate(idat)
    const rowBytes = Math.ceil(width / 8)
    const dark = (x: number, y: number) => ((raw[y * (rowBytes + 1) + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1) === 0
    for (let my = -4; my < modules.size + 4; my++) {
      for (let mx = -4; mx < modules.size + 4; mx++) {
        const expected = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size && Boolean(modules.get(my, mx))
        // The centre pixel of each module cell.
        expect(dark((mx + 4) * 8 + 4, (my + 4) * 8 + 4)).toBe(expected)
      }
    }
  })

  it('wraps it as a PNG data URL', async () => {
    expect(await qrDataUrl('hello')).toMatch(/^data:image\/png;base64,iVBORw0KGgo/)
  })
})
