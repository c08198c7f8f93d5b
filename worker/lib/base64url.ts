/** base64url (RFC 4648 §5, no padding) for bytes and UTF-8 text: tokens, sealed values and opaque cursors all use it. */
const encoder = new TextEncoder()
const decoder = new TextDecoder()

export function base64urlBytes(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/** Throws on text that is not base64url. */
export function fromBase64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text.replaceAll('-', '+').replaceAll('_', '/'))
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}

export function base64urlText(text: string): string {
  return base64urlBytes(encoder.encode(text))
}

/** The UTF-8 text inside, or null when it is not base64url. */
export function fromBase64urlText(text: string): string | null {
  try {
    return decoder.decode(fromBase64urlBytes(text))
  } catch {
    return null
  }
}
