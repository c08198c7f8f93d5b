/**
 * The pairing views the Worker's alpha routes build too (a *.shared.ts: shapes only, both sides import it): nothing to
 * scan or type, and the view of a number with no session (spec part 3's `not_initialized`), which the status route
 * answers without waking an AccountDO and the object answers for a session it has no record of.
 */
/** No QR and no pairing code: a record that shows neither, and a view with nothing to scan or type. */
export const NO_PAIRING = { qr: null, qrExpiresAt: null, pairingCode: null, pairingCodeExpiresAt: null } as const

/** No session exists: never connected here, or removed. */
export const NO_SESSION_VIEW = { status: 'not_initialized', ...NO_PAIRING, reason: null, message: null } as const
