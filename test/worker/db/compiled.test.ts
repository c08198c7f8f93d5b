/**
 * Compiled statements (worker/db/compiled.ts) against real D1: Drizzle writes the SQL once, values are bound per
 * call through each column's encoder, constants stay in place, and a missing value is refused before D1 sees it.
 */
import { env } from 'cloudflare:workers'
import { and, eq } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { contacts } from '../../../schema/d1'
import { database } from '../../../worker/db/client'
import { compiled, compiledVariants, placeholders } from '../../../worker/db/compiled'
import { connectCustom, newTenant, pushInbound } from '../helpers'
import { setContactFlags } from '../state'

const db = database(env.DB)

type ByFlag = { tenantId: string; private: boolean }
const contactsByPrivacy = compiled<ByFlag>((d) => {
  const p = placeholders<ByFlag>()
  return d
    .select({ id: contacts.id })
    .from(contacts)
    .where(and(eq(contacts.tenantId, p.tenantId), eq(contacts.channel, 'custom'), eq(contacts.private, p.private)))
})

async function tenantWithContacts() {
  const t = await newTenant()
  await connectCustom(t)
  const open = String((await pushInbound(t, { body: 'a', fromId: 'open' })).body.contact_id)
  const hidden = String((await pushInbound(t, { body: 'b', fromId: 'hidden' })).body.contact_id)
  await setContactFlags(hidden, { private: true })
  return { t, open, hidden }
}

describe('compiled statements', () => {
  it('binds values through the column encoders (a boolean becomes 0/1) and keeps constants', async () => {
    const { t, open, hidden } = await tenantWithContacts()
    const statement = contactsByPrivacy(db)
    expect(statement.text).toContain('?')
    const rows = async (flag: boolean) => (await statement.bind(db, { tenantId: t.tenantId, private: flag }).all<{ id: string }>()).results.map((r) => r.id)
    expect(await rows(true)).toEqual([hidden])
    expect(await rows(false)).toEqual([open])
  })

  it('compiles once per isolate and returns the same statement on every call', () => {
    expect(contactsByPrivacy(db)).toBe(contactsByPrivacy(db))
  })

  it('refuses to bind when a placeholder has no value', () => {
    expect(() => contactsByPrivacy(db).bind(db, { tenantId: 't' } as unknown as ByFlag)).toThrow('no value for placeholder "private"')
  })

  it('keeps one compiled statement per variant key', async () => {
    const { t, open } = await tenantWithContacts()
    type V = { tenantId: string }
    const byChannel = compiledVariants<'custom' | 'sms', V>((d, channel) => {
      const p = placeholders<V>()
      return d
        .select({ id: contacts.id })
        .from(contacts)
        .where(and(eq(contacts.tenantId, p.tenantId), eq(contacts.channel, channel), eq(contacts.private, false)))
    })
    expect(byChannel(db, 'custom')).toBe(byChannel(db, 'custom'))
    expect(byChannel(db, 'custom')).not.toBe(byChannel(db, 'sms'))
    expect((await byChannel(db, 'custom').bind(db, { tenantId: t.tenantId }).all<{ id: string }>()).results.map((r) => r.id)).toEqual([open])
    expect((await byChannel(db, 'sms').bind(db, { tenantId: t.tenantId }).all()).results).toEqual([])
  })
})
