/** The Drizzle handle over a D1 binding; every query function in worker/db takes one (which database: db/shards.ts). */
import { drizzle } from 'drizzle-orm/d1'
import * as schema from '../../schema/d1'
import type { Db } from '../env'

export type { Db }

export function database(d1: D1Database): Db {
  return drizzle(d1, { schema })
}
