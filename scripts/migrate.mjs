// `npm run db:migrate:local` / `npm run db:migrate:remote`: the D1 migrations on the directory and every shard
// (scripts/d1-databases.mjs). Extra arguments go to wrangler (`-- --persist-to dir`).
import { d1Databases, migrateAll } from './d1-databases.mjs'

const where = process.argv.includes('--remote') ? '--remote' : '--local'
const extra = process.argv.slice(2).filter((a) => a !== '--remote' && a !== '--local')
const failed = migrateAll(where, extra)
if (failed) {
  console.error(`Migrations failed on ${failed.binding}:\n${failed.output}`)
  process.exit(failed.status)
}
console.log(
  `Migrations applied (${where.slice(2)}): ${d1Databases()
    .map((d) => d.binding)
    .join(', ')}`
)
