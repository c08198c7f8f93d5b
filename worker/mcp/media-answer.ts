/**
 * The answer of get_media: besides the usual `HTTP <status>` text block (here a JSON summary of the item, not its
 * bytes), an image as an MCP image block and audio or a voice note as an audio block, so an agent can look and listen
 * without another HTTP client. Items over MCP_MEDIA_INLINE_MAX_BYTES, and other kinds (video, documents), come as the
 * text block only, which says to fetch them by their link.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import { toolResult } from './dispatch'

/** Larger items are not inlined: base64 grows them by a third and clients cap what they put into a model's context. */
export const MCP_MEDIA_INLINE_MAX_BYTES = 5 * 1024 * 1024

function base64(bytes: Uint8Array): string {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

export async function mediaToolResult(res: Response, mediaId: string): Promise<CallToolResult> {
  if (res.status !== 200) return toolResult(res.status, await res.text())
  const contentType = res.headers.get('content-type') ?? 'application/octet-stream'
  const size = Number(res.headers.get('content-length') ?? -1)
  const mime = contentType.split(';')[0]!.trim().toLowerCase()
  const block = mime.startsWith('image/') ? 'image' : mime.startsWith('audio/') ? 'audio' : null
  const inline = block !== null && size >= 0 && size <= MCP_MEDIA_INLINE_MAX_BYTES
  const summary = {
    media_id: mediaId,
    content_type: contentType,
    size,
    inlined: inline,
    note: inline
      ? `the content follows as an ${block} block`
      : `not inlined (${block === null ? 'only images and audio are' : `over ${MCP_MEDIA_INLINE_MAX_BYTES} bytes`}); use media.url of the message or get_media_link`,
  }
  if (!inline) {
    await res.body?.cancel()
    return toolResult(200, JSON.stringify(summary))
  }
  const data = base64(new Uint8Array(await res.arrayBuffer()))
  const result = toolResult(200, JSON.stringify(summary))
  result.content.push(block === 'image' ? { type: 'image', data, mimeType: mime } : { type: 'audio', data, mimeType: mime })
  return result
}
