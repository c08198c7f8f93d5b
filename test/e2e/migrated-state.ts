/**
 * A freshly migrated local state directory (every D1 database of wrangler.toml, after `wrangler d1 migrations apply
 * --local`, as `npm start` runs it), built once per machine and copied for each local server.
 *
 * Why: one `wrangler d1 migrations apply` is a whole wrangler and workerd start, about 13 s of wall time and 15 s of
 * CPU on these 2-core machines, and a server needs it once per database (the directory and each shard). Every e2e
 * file starts at least one server, so the suite spent most of a minute of CPU per file producing the same bytes.
 *
 * The copy is the result itself, not an imitation of it: the template is what wrangler wrote, keyed by everything that
 * decides it (the migration files, the D1 bindings of wrangler.toml, the wrangler version of the checkout), so a
 * changed migration or an upgraded wrangler builds a new one. A template is published by an atomic rename of a
 * complete directory: a build that dies half-way leaves nothing a later server would pick up, and two processes
 * building at once both finish with the same bytes (one rename wins, the other copy is dropped).
 */
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { d1Databases, migrateAll } from '../../scripts/d1-databases.mjs'

/** What decides the migrated state of `root`'s databases, as a hex digest. */
export function migratedStateKey(root: string): string {
  const hash = createHash('sha256')
  const databases = d1Databases(join(root, 'wrangler.toml'))
  hash.update(JSON.stringify(databases))
  hash.update(readFileSync(join(root, 'node_modules', 'wrangler', 'package.json')))
  for (const dir of new Set(databases.map((d) => d.migrationsDir))) {
    // wrangler applies the .sql files at the top (schema/migrations/meta is drizzle-kit's journal, not read by wrangler).
    const sql = readdirSync(join(root, dir)).filter((n) => n.endsWith('.sql'))
    for (const name of sql.sort()) {
      hash.update(`\0${dir}\0${name}\0`)
      hash.update(readFileSync(join(root, dir, name)))
    }
  }
  return hash.digest('hex')
}

/**
 * Fills `persist` (which must not exist yet) with `root`'s migrated state: a copy of the machine's template, built
 * first when there is none for this key, by the same `migrateAll` that `npm start` runs.
 */
export function copyMigratedState(root: string, persist: string): void {
  const template = join(tmpdir(), `gateway-migrated-${migratedStateKey(root).slice(0, 24)}`)
  if (!existsSync(template)) {
    const building = mkdtempSync(`${template}.building-`)
    try {
      const failed = migrateAll('--local', ['--persist-to', join(building, 'state')], join(root, 'wrangler.toml'))
      if (failed) throw new Error(`migrations failed on ${failed.binding}:\n${failed.output}`)
      renameSync(building, template)
    } catch (err) {
      // Another process published the same template first: its bytes are the ones this build would have made.
      if (!existsSync(template)) throw err
    } finally {
      rmSync(building, { recursive: true, force: true })
    }
  }
  cpSync(join(template, 'state'), persist, { recursive: true })
}
