/** OpenAPI error responses of the webhook routes: every one answers the `{success: false, error, error_code}` shape. */
import { StatusError } from '../../schema/api/common'

export const errors = (codes: number[]) =>
  Object.fromEntries(
    codes.map((code) => [
      code,
      {
        description:
          { 400: 'Invalid request', 401: 'Missing or invalid API key', 403: 'Webhooks are not enabled for this account', 404: 'No subscription with that id or name', 409: 'Conflict (see error)' }[code] ??
          `Error (HTTP ${code})`,
        content: { 'application/json': { schema: StatusError } },
      },
    ])
  )
