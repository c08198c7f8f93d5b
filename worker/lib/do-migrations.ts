/**
 * Schema migrations for a Durable Object's SQLite: each entry of `migrations` runs once, in order, in one
 * transaction, tracked in a `schema_version` table. Append entries; never edit one that has shipped.
 */
export function migrateSqlite(storage: DurableObjectStorage, migrations: readonly string[]): void {
  const sql = storage.sql
  sql.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)')
  const current = sql.exec<{ version: number }>('SELECT version FROM schema_version').toArray()[0]?.version ?? 0
  storage.transactionSync(() => {
    for (let v = current; v < migrations.length; v++) sql.exec(migrations[v]!)
    if (current === 0) sql.exec('INSERT INTO schema_version (version) VALUES (?)', migrations.length)
    else sql.exec('UPDATE schema_version SET version = ?', migrations.length)
  })
}
