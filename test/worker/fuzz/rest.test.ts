/**
 * Issue 14 §5: every REST operation of the OpenAPI document, fuzzed with valid, boundary and hostile requests from
 * its schemas, answers a status it documents in its family's error shape, never a 500, and never shows a stack
 * trace or an internal name. Called with a tenant that has accounts on every channel, so real ids reach deep paths.
 */
import { afterAll, beforeAll, describe, it } from 'vitest'
import { body, call, ORIGIN } from '../helpers'
import { deepTenant, NARROW, type DeepTenant } from './deep-tenant'
import { ANY_BODY_OPERATION, judge } from './judge'
import { describeRequest, operationsOf, requestArbitrary, resolverFor, type FuzzRequest, type Operation } from './operations'
import { fuzz, printTallies, tally } from './settings'

const doc = await body(await call('/v1/openapi.json'))
const resolve = resolverFor(doc)
// Removals last, so the other operations run against every account and the webhook while they exist.
const operations = operationsOf(doc).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))

/** Any status but a 5xx: a raw segment like `..` may route the request to another operation, or to none. */
const ANY_CLIENT_STATUS = Array.from({ length: 300 }, (_, i) => 200 + i)

/**
 * A long poll still waiting after this long is a fine answer in progress (a hostile timeout_s that happens to be a
 * small valid number); it is abandoned, which ends the wait on the server too.
 */
const LONG_POLL_CUT_MS = 1500

async function answer(op: Operation, req: FuzzRequest) {
  const longPoll = op.name === 'GET /messages/wait'
  try {
    const res = await call(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: longPoll ? AbortSignal.timeout(LONG_POLL_CUT_MS) : undefined,
    })
    return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() }
  } catch (err) {
    if (longPoll && err instanceof DOMException && err.name === 'TimeoutError') return undefined
    throw err
  }
}

let tenant: DeepTenant

beforeAll(async () => {
  tenant = await deepTenant()
}, 60_000)

afterAll(() => printTallies('REST operations: statuses answered'))

describe('every REST operation, fuzzed', () => {
  for (const op of operations) {
    it(`${op.name} answers only documented statuses in its error shape`, async () => {
      const ctx = { resolve, uris: tenant.uris, known: tenant.known, narrow: NARROW }
      await fuzz(op.name, requestArbitrary(op, ctx, tenant.t.key), async (req) => {
        const got = await answer(op, req)
        if (!got) return
        tally(op.name, got.status)
        const path = new URL(req.url, ORIGIN).pathname
        const problems = judge(path, got, op.statuses, req.mangled ? ANY_CLIENT_STATUS : op.body ? ANY_BODY_OPERATION : [], op.htmlStatuses)
        if (problems.length) throw new Error(`${describeRequest(req)}\n${problems.join('\n')}`)
      })
    })
  }
})
