// Types of scripts/d1-databases.mjs for the TypeScript tests.

/** `migrationsDir` is relative to the wrangler.toml it was read from. */
export type D1Database = { binding: string; name: string; id: string | undefined; migrationsDir: string }

export declare function d1Databases(configPath?: string): D1Database[]

export declare function migrateAll(
  where: '--local' | '--remote',
  extraArgs?: string[],
  configPath?: string
): { binding: string; status: number; output: string } | null
