/**
 * What every fuzzed answer must be: a status the operation documents (never a 5xx it does not), a body in its route
 * family's error shape (spec part 7, worker/errors.ts), and nothing that shows the service's insides.
 */
import { errorFamilyFor } from '../../../worker/app'

/** Statuses any /v1 operation may answer (the API description's introduction): body too large and rate limited. */
export const ANY_OPERATION = new Set([413, 429])

/** And any operation that takes a JSON body: the introduction's 415 for a body of another Content-Type. */
export const ANY_BODY_OPERATION = new Set([...ANY_OPERATION, 415])

/** What must never reach a client: stack frames, source paths, runtime error class names, the database's words. */
const LEAKS =
  /\bat [^\n]*:\d+:\d+|\/work\/|node_modules|\.[cm]?[jt]s:\d|\b(?:Type|Reference|Range|Syntax|URI|Eval|Internal)Error\b|\bD1_[A-Z_]+|SQLITE|drizzle|Failed query|\bstack\b/i

export function leaks(text: string): string | undefined {
  return LEAKS.exec(text)?.[0]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The error body shape of the family `path` belongs to, as a list of what is wrong with `json` (empty: fine). */
export function shapeProblems(path: string, status: number, json: unknown): string[] {
  if (!isObject(json)) return [`error body is not a JSON object`]
  const keys = Object.keys(json).sort()
  if (errorFamilyFor(path) === 'messaging') {
    const problems: string[] = []
    if (typeof json.error_code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(json.error_code)) problems.push('messaging error_code must be a snake_case string')
    if (typeof json.error !== 'string' || !json.error) problems.push('messaging error must be a non-empty string')
    if ('retry_after_s' in json && !Number.isInteger(json.retry_after_s)) problems.push('retry_after_s must be an integer')
    if (keys.some((k) => !['error', 'error_code', 'retry_after_s'].includes(k))) problems.push(`messaging error has extra members: ${keys.join(',')}`)
    return problems
  }
  const ok =
    json.success === false && typeof json.error === 'string' && json.error !== '' && json.error_code === status && keys.join(',') === 'error,error_code,success'
  return ok ? [] : [`status-family error must be {success: false, error, error_code: ${status}}`]
}

export type Answer = { status: number; contentType: string | null; text: string }

/**
 * Problems with one answer to a request on `path` (the path as sent: the route that answered decides the family).
 * `documented` are the operation's statuses; `extra` those the request earned by itself (a mangled path: 404).
 */
export function judge(
  path: string,
  answer: Answer,
  documented: ReadonlySet<number>,
  extra: Iterable<number> = [],
  /** Statuses documented as an HTML page: their body is a page for a person, not a JSON error. */
  html: ReadonlySet<number> = new Set()
): string[] {
  const problems: string[] = []
  const allowed = new Set([...documented, ...ANY_OPERATION, ...extra])
  if (answer.status >= 500 && !documented.has(answer.status)) problems.push(`answered ${answer.status}`)
  else if (!allowed.has(answer.status)) problems.push(`answered ${answer.status}, which the operation does not document (${[...documented].join(', ')})`)
  const leaked = leaks(answer.text)
  if (leaked) problems.push(`the body shows "${leaked}"`)
  if (answer.status >= 400 && html.has(answer.status)) {
    if (!answer.contentType?.startsWith('text/html')) problems.push(`a documented HTML error answered as ${answer.contentType}`)
  } else if (answer.status >= 400) {
    let json: unknown
    try {
      json = JSON.parse(answer.text)
    } catch {
      problems.push('the error body is not JSON')
    }
    if (json !== undefined) problems.push(...shapeProblems(path, answer.status, json))
    if (!answer.contentType?.startsWith('application/json')) problems.push(`error Content-Type is ${answer.contentType}`)
  }
  return problems.map((p) => `${p}\n  body: ${answer.text.slice(0, 400)}`)
}
