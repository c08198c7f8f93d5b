/** The fuzz suites' judge: it must catch what it is there to catch, or a green fuzz run proves nothing. */
import { describe, expect, it } from 'vitest'
import { judge, leaks, shapeProblems } from './judge'

const json = (status: number, body: unknown) => ({ status, contentType: 'application/json', text: JSON.stringify(body) })
const documented = new Set([200, 400, 404])

describe('judge', () => {
  it('passes a documented answer in the family shape', () => {
    expect(judge('/v1/messages/x', json(404, { error_code: 'message_not_found', error: 'No such message' }), documented)).toEqual([])
    expect(judge('/v1/webhooks/x', json(404, { success: false, error: 'No such webhook', error_code: 404 }), documented)).toEqual([])
  })

  it('fails a 500, even in the right shape', () => {
    expect(judge('/v1/messages', json(500, { error_code: 'internal_error', error: 'internal error' }), documented)[0]).toMatch(/^answered 500/)
  })

  it('takes an HTML page as the error of a status documented as HTML, and only there', () => {
    const page = { status: 403, contentType: 'text/html; charset=UTF-8', text: '<!doctype html><title>Link not valid</title>' }
    const withHtml = new Set([200, 403, 410])
    expect(judge('/v1/channels/beta/connect/page', page, withHtml, [], new Set([403, 410]))).toEqual([])
    expect(judge('/v1/channels/beta/connect/page', page, withHtml)[0]).toMatch(/not JSON/)
    const jsonInstead = json(403, { success: false, error: 'x', error_code: 403 })
    expect(judge('/v1/channels/beta/connect/page', jsonInstead, withHtml, [], new Set([403]))[0]).toMatch(/documented HTML error/)
  })

  it('fails a status the operation does not document', () => {
    expect(judge('/v1/messages', json(409, { error_code: 'conflict', error: 'x' }), documented)[0]).toMatch(/does not document/)
  })

  it('fails the other family’s shape, extra members and a non-JSON error', () => {
    expect(shapeProblems('/v1/messages', 400, { success: false, error: 'x', error_code: 400 })).not.toEqual([])
    expect(shapeProblems('/v1/webhooks', 400, { error_code: 'invalid_request', error: 'x' })).not.toEqual([])
    expect(shapeProblems('/v1/webhooks', 400, { success: false, error: 'x', error_code: 404 })).not.toEqual([])
    expect(shapeProblems('/v1/usage', 400, { error_code: 'bad', error: 'x', detail: 'y' })).not.toEqual([])
    expect(judge('/v1/usage', { status: 400, contentType: 'text/plain', text: 'Bad Request' }, documented)).toHaveLength(2)
  })

  it('finds stack frames, source paths and database names in a body', () => {
    for (const text of [
      'Error\n    at handler (/work/main/worker/routes/messages.ts:12:5)',
      "TypeError: Cannot read properties of undefined (reading 'id')",
      'D1_ERROR: UNIQUE constraint failed',
      'SQLITE_TOOBIG',
      'Failed query: select * from messages',
      'at async Object.fetch (index.js:1:2)',
    ]) {
      expect(leaks(text), text).toBeDefined()
    }
    expect(leaks('{"error_code":"invalid_text","error":"text: Too big: expected string to have <=4096 characters"}')).toBeUndefined()
  })
})
