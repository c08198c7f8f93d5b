// Types of scripts/d1-databases.mjs for the TypeScript tests.

export type D1Database = { binding: string; name: string; id: string | undefined }

export declare function d1Databases(configPath?: string): D1Database[]

export declare function migrateAll(
  where: '--local' | '--remote',
  extraArgs?: string[],
  configPath?: string
): { binding: string; status: number; output: string } | null
