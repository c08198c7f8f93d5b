/**
 * The migrated-state template's key (test/e2e/migrated-state.ts): a server must never start from a template built for
 * other migrations, other D1 bindings or another wrangler, and what wrangler does not read must not split templates.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { repoRoot } from './local-server'
import { migratedStateKey } from './migrated-state'

let root: string

/** A checkout reduced to what the key reads: wrangler.toml, the migrations, wrangler's package.json. */
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'migrated-state-'))
  writeFileSync(join(root, 'wrangler.toml'), readFileSync(join(repoRoot, 'wrangler.toml')))
  mkdirSync(join(root, 'schema', 'migrations', 'meta'), { recursive: true })
  writeFileSync(join(root, 'schema', 'migrations', '0000_init.sql'), 'CREATE TABLE a (id TEXT);\n')
  writeFileSync(join(root, 'schema', 'migrations', 'meta', '_journal.json'), '{}')
  mkdirSync(join(root, 'node_modules', 'wrangler'), { recursive: true })
  writeFileSync(join(root, 'node_modules', 'wrangler', 'package.json'), '{"version":"4.0.0"}')
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe('migratedStateKey', () => {
  it('is the same for the same inputs, whatever the checkout is called', () => {
    const first = migratedStateKey(root)
    expect(migratedStateKey(root)).toBe(first)
    const other = mkdtempSync(join(tmpdir(), 'migrated-state-copy-'))
    try {
      for (const f of ['wrangler.toml', 'schema/migrations/0000_init.sql', 'node_modules/wrangler/package.json']) {
        mkdirSync(join(other, f, '..'), { recursive: true })
        writeFileSync(join(other, f), readFileSync(join(root, f)))
      }
      expect(migratedStateKey(other)).toBe(first)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('changes with a migration added or edited', () => {
    const before = migratedStateKey(root)
    writeFileSync(join(root, 'schema', 'migrations', '0001_more.sql'), 'CREATE TABLE b (id TEXT);\n')
    const added = migratedStateKey(root)
    expect(added).not.toBe(before)
    writeFileSync(join(root, 'schema', 'migrations', '0001_more.sql'), 'CREATE TABLE b (id INTEGER);\n')
    expect(migratedStateKey(root)).not.toBe(added)
  })

  it('changes with the wrangler version and with the D1 bindings', () => {
    const before = migratedStateKey(root)
    writeFileSync(join(root, 'node_modules', 'wrangler', 'package.json'), '{"version":"4.0.1"}')
    const upgraded = migratedStateKey(root)
    expect(upgraded).not.toBe(before)
    const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
    expect(toml).toContain('messaging-gateway-shard-1')
    writeFileSync(join(root, 'wrangler.toml'), toml.replace('messaging-gateway-shard-1', 'messaging-gateway-shard-one'))
    expect(migratedStateKey(root)).not.toBe(upgraded)
  })

  it('ignores what wrangler does not apply (drizzle-kit’s journal)', () => {
    const before = migratedStateKey(root)
    writeFileSync(join(root, 'schema', 'migrations', 'meta', '_journal.json'), '{"entries":[1]}')
    expect(migratedStateKey(root)).toBe(before)
  })
})
