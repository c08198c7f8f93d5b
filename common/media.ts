/** Guesses an attachment's content type and file name from its URL, for the custom channel payload and the wire media object. */
const TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  '3gp': 'video/3gpp',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  wav: 'audio/wav',
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  zip: 'application/zip',
}

export function fileNameFromUrl(url: string): string | null {
  try {
    const last = new URL(url).pathname.split('/').filter(Boolean).at(-1)
    return last ? decodeURIComponent(last) : null
  } catch {
    return null
  }
}

/** The content type a file name's extension stands for, or null when it is not one of the common ones. */
export function contentTypeFromName(name: string): string | null {
  const ext = name.split('.').at(-1)?.toLowerCase()
  return (ext && TYPES[ext]) || null
}

/** The common extension for a content type (parameters ignored), or null when it is not one of the common ones. */
export function extensionFromContentType(contentType: string | null): string | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return Object.entries(TYPES).find(([, t]) => t === type)?.[0] ?? null
}

export function contentTypeFromUrl(url: string): string | null {
  const name = fileNameFromUrl(url)
  return name ? contentTypeFromName(name) : null
}

/**
 * Whether an attachment is shown as a voice note: Ogg (Opus) audio, the format voice notes are recorded in; alpha
 * sends it with `ptt` (relay/alpha/convert.ts) and the custom channel says `isVoiceNote` (spec 4.7).
 */
export function isVoiceNoteType(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  return type === 'audio/ogg' || type === 'audio/opus'
}
