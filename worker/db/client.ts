/** The Drizzle handle over the D1 binding; every query function in worker/db takes one. */
import { drizzle } from 'drizzle-orm/d1'
import * as schema from '../../schema/d1'

export type Db = ReturnType<typeof drizzle<typeof schema>>

export function database(d1: D1Database): Db {
  return drizzle(d1, { schema })
}
