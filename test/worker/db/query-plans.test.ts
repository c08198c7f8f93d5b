/**
 * Issue 22 §3: every query of worker/db with SQLite's plan for it (`EXPLAIN QUERY PLAN` on the real D1 schema), and
 * no query on a request's or a message's path that walks a table whose size grows with the history. The table this
 * prints is the one in docs/ARCHITECTURE.md ("Queries and their plans").
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { database } from '../../../worker/db/client'
import { D1Meter } from '../d1-meter'
import { CATALOG, MODULES, NOT_QUERIES, type Path } from './query-catalog'

/** Tables that grow with the traffic and its history; the others grow with tenants, accounts, keys or webhooks. */
const HISTORY = ['messages', 'contacts', 'events', 'webhook_deliveries', 'audit_log', 'media', 'account_stats']

type Planned = { name: string; path: Path; statements: { sql: string; plan: string[] }[] }

const meter = new D1Meter(env.DB)

function isStatement(v: unknown): v is { all(): Promise<unknown> } {
  return typeof v === 'object' && v !== null && 'bind' in v && 'all' in v
}

/** Runs whatever a catalog call answered: a promise is awaited, a Drizzle query or a bound statement executed. */
async function execute(result: unknown): Promise<void> {
  if (Array.isArray(result)) {
    for (const r of result) await execute(r)
    return
  }
  if (isStatement(result)) await result.all()
  else await result
}

async function planOf(sql: string, params: unknown[]): Promise<string[]> {
  const r = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>()
  return r.results.map((p) => p.detail)
}

const planned: Planned[] = []

/**
 * A plan in a few words for docs/ARCHITECTURE.md: the index each step uses and its terms (`*` when the index covers
 * the query; `key` is the table's primary or unique key), `rowid` for a lookup by rowid (`rowid end`: its min or max), `walk` for a scan, `sort` when rows are sorted; `write` for a plain
 * insert, which has no plan of its own.
 */
function compact(plan: string[]): string {
  const steps = plan.flatMap((line) => {
    const search = /^SEARCH (\w+) USING (COVERING )?INDEX (\w+) \((.*)\)/.exec(line)
    if (search) {
      const index = search[3]!.replace(/^sqlite_autoindex_(\w+)_\d+$/, '$1 key')
      return [`${index}${search[2] ? '*' : ''} (${search[4]!.replaceAll('=?', '=').replaceAll('>?', '>').replaceAll('<?', '<')})`]
    }
    const rowid = /^SEARCH (\w+) USING INTEGER PRIMARY KEY/.exec(line)
    if (rowid) return [`${rowid[1]} rowid`]
    // min() or max() of the rowid: one step from an end.
    const end = /^SEARCH (\w+)$/.exec(line)
    if (end) return [`${end[1]} rowid end`]
    const walkIndex = /^SCAN (\w+) USING (COVERING )?INDEX (\w+)/.exec(line)
    if (walkIndex) return [`walk ${walkIndex[3]}`]
    if (/^SCAN json_each/.test(line)) return ['json list']
    const walk = /^SCAN (\w+)$/.exec(line)
    if (walk) return [`walk ${walk[1]}`]
    if (/TEMP B-TREE FOR LAST TERM/.test(line)) return ['sort ties']
    if (/TEMP B-TREE/.test(line)) return ['sort']
    return []
  })
  return steps.length === 0 ? 'write' : steps.join(', ')
}

beforeAll(async () => {
  for (const [name, entry] of Object.entries(CATALOG)) {
    meter.reset()
    try {
      await execute(entry.call(database(meter.d1)))
    } catch {
      // A constraint or a missing row is fine: the statement went out, and only its plan is wanted.
    }
    const statements = []
    for (const s of meter.log) statements.push({ sql: s.sql, plan: await planOf(s.sql, s.params) })
    planned.push({ name, path: entry.path, statements })
  }
  const lines = ['| Query | Path | Plan |', '|---|---|---|']
  for (const p of planned) lines.push(`| ${p.name} | ${p.path} | ${p.statements.map((s) => compact(s.plan)).join(' / ')} |`)
  console.log(`query plans\n${lines.join('\n')}`)
}, 60_000)

describe('query plans', () => {
  it('covers every exported query of worker/db', () => {
    const listed = new Set(Object.keys(CATALOG).map((k) => k.replace(/\(.*\)$/, '')))
    const missing: string[] = []
    for (const [module, exports] of MODULES) {
      for (const [name, value] of Object.entries(exports)) {
        const id = `${module}.${name}`
        if (typeof value === 'function' && !NOT_QUERIES.has(id) && !listed.has(id)) missing.push(id)
      }
    }
    expect(missing).toEqual([])
  })

  it('sends at least one statement for every catalog entry', () => {
    expect(planned.filter((p) => p.statements.length === 0).map((p) => p.name)).toEqual([])
  })

  it('has no request or message path walk a history table', () => {
    const walks = planned
      .filter((p) => p.path === 'hot')
      .flatMap((p) =>
        p.statements.flatMap((s) => s.plan.filter((line) => HISTORY.some((t) => new RegExp(`^SCAN ${t}\\b`).test(line))).map((line) => `${p.name}: ${line}`))
      )
    expect(walks).toEqual([])
  })
})
