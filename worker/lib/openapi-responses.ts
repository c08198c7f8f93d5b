/** OpenAPI response entries shared by the route files: the status-family error bodies and JSON answers. */
import { StatusError } from '../../schema/api/common'

const DEFAULT_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing or invalid key',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict (see error); on a creating POST also a retry while the first request with its Idempotency-Key still runs (Retry-After)',
  422: 'Refused (see error); on a creating POST also an Idempotency-Key used before for a different request',
  429: 'Rate limited (README "Limits and abuse protection"); Retry-After says when to try again',
  507: 'No shard has room (docs/CAPACITY.md, "When a database fills")',
}

/** `{success: false, error, error_code}` answers for the given statuses, with route-specific descriptions if given. */
export function statusErrors(codes: number[], descriptions: Record<number, string> = {}) {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        description: descriptions[code] ?? DEFAULT_DESCRIPTIONS[code] ?? `Error (HTTP ${code})`,
        content: { 'application/json': { schema: StatusError } },
      },
    ])
  )
}
