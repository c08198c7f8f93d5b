/** OpenAPI error responses of the webhook routes: every one answers the `{success: false, error, error_code}` shape. */
import { statusErrors } from '../lib/openapi-responses'

export const errors = (codes: number[]) =>
  statusErrors(codes, {
    401: 'Missing or invalid API key',
    403: 'Webhooks are not enabled for this account',
    404: 'No subscription with that id or name',
  })
