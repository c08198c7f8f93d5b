/** The Messaging Gateway's typed client: createGateway, the error classes, the wait loop and webhook verification. */
export { GatewayError, MessagingError, StatusError, errorFromResponse } from './errors.js'
export { apiBase, call, createGateway, type Gateway, type GatewayOptions, type Message, type Schemas, type SendMessageBody } from './gateway.js'
export type { components, operations, paths } from './openapi.js'
export { MessageStream, STREAM_RETRY_MAX_MS, STREAM_RETRY_MIN_MS, type StreamOptions } from './stream.js'
export { verifyWebhook, WEBHOOK_TOLERANCE_S, WebhookVerificationError, type VerifyWebhookInput, type WebhookEvent, type WebhookFailure } from './webhooks.js'
