/**
 * Real D1 failing on purpose: a trigger in the test's own D1 database aborts the statement it fires on, so the batch
 * holding it fails inside D1, mid-way, as a storage failure would, and D1 rolls the whole batch back. There is no
 * seam in the production code for it. Each test file has its own D1, so a fault never reaches another file.
 */
import { env } from 'cloudflare:workers'

let seq = 0

/**
 * Fails every `op` on `table` whose row matches `when` (SQL over `NEW`, written by the test) until `heal()`.
 * The error the code sees is D1's own: `D1_ERROR: injected D1 fault: SQLITE_CONSTRAINT …`.
 */
export async function failD1(table: string, op: 'INSERT' | 'UPDATE', when = '1'): Promise<{ heal(): Promise<void> }> {
  const name = `fault_${table}_${++seq}`
  await env.DB.prepare(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} WHEN ${when} BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`).run()
  return {
    heal: () =>
      env.DB.prepare(`DROP TRIGGER ${name}`)
        .run()
        .then(() => undefined),
  }
}
