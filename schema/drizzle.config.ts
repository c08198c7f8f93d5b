// drizzle-kit configuration: `npm run db:generate` writes SQL migrations that wrangler applies (dev, tests, prod).
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: './schema/d1.ts',
  out: './schema/migrations',
})
