/** Downloads an attachment from the simulated network's media server as a stream (the real driver decrypts alpha's). */
import { get } from 'node:http'
import type { InboundAttachment } from '../connector'
import { mediaKindOf } from '../media-kind'
import type { SimMedia } from './network/protocol'

export function simAttachment(m: SimMedia): InboundAttachment {
  return {
    kind: mediaKindOf(m.contentType, m.voiceNote),
    contentType: m.contentType,
    fileName: m.fileName,
    declaredSize: m.size,
    open: () =>
      new Promise((resolve, reject) => {
        get(m.url, (res) => {
          if (res.statusCode !== 200) {
            res.resume()
            return reject(new Error(`the media server answered HTTP ${res.statusCode}`))
          }
          resolve(res)
        }).on('error', reject)
      }),
  }
}
