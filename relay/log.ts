/**
 * Structured JSON logs (pino). Lines carry ids (account, session, fence, message id), never message text, QR
 * payloads, pairing codes or session material; the redaction list is a second line of defence for that rule.
 */
import { pino, type Logger } from 'pino'

export const REDACTED_PATHS = [
  'text',
  '*.text',
  'message.text',
  'qr',
  '*.qr',
  'state.qr',
  'state.code',
  'pairingCode',
  'entries',
  'changes',
  'token',
  'sessionKey',
  'creds',
  '*.creds',
]

export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { component: 'relay', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  })
}
