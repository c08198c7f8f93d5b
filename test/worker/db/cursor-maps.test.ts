/**
 * worker/db/cursor-maps.ts `seqHere` for a cursor of a later placement than the caller's view of the tenant: a cache
 * behind a move is told to retry (503 through the tenant-moving error), a placement the directory never gave the
 * tenant is an invalid cursor (400), which no retry would cure.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { seqHere } from '../../../worker/db/cursor-maps'
import { ApiError, isTenantMoving } from '../../../worker/errors'

const db = database(env.DB)
const tenant = { id: 'ten_cursor_maps', placement: 1 }

const invalid = () => new ApiError(400, 'invalid_cursor', 'cursor: not a cursor returned here')

async function refusal(placedAt?: () => Promise<number | undefined>): Promise<unknown> {
  try {
    await seqHere(db, tenant, 'messages', { seq: 5, placement: 3 }, 'after', placedAt && { placedAt, refuse: invalid })
  } catch (err) {
    return err
  }
  throw new Error('seqHere took a cursor of a later placement')
}

describe('seqHere and a cursor of a later placement', () => {
  it('answers tenant moving when the directory has the tenant there (an isolate cache behind the move)', async () => {
    expect(isTenantMoving(await refusal(async () => 3))).toBe(true)
    expect(isTenantMoving(await refusal(async () => 4))).toBe(true)
  })

  it('answers tenant moving when nothing can tell (no directory reader, or the tenant unknown there)', async () => {
    expect(isTenantMoving(await refusal())).toBe(true)
    expect(isTenantMoving(await refusal(async () => undefined))).toBe(true)
  })

  it('answers the caller’s own refusal for a placement the directory never gave the tenant', async () => {
    const err = await refusal(async () => 1)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 400, code: 'invalid_cursor', message: 'cursor: not a cursor returned here' })
  })

  it('maps a cursor of the current placement without asking the directory', async () => {
    let asked = false
    const placedAt = async () => {
      asked = true
      return 1
    }
    const seq = await seqHere(db, tenant, 'messages', { seq: 5, placement: 1 }, 'after', { placedAt, refuse: invalid })
    expect(seq).toBe(5)
    expect(asked).toBe(false)
  })
})
