/**
 * The benchmarks' wrangler config (test/e2e/local-server.ts): wrangler reads it as the checkout's own minus the
 * `[assets]` table, so the Worker runs without the static-asset router and with every binding and setting it has.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { unstable_readConfig } from 'wrangler'
import { repoRoot, withoutAssets, wranglerConfig } from './local-server'

/** What wrangler makes of a config file, without the fields naming the file itself. */
function readConfig(path: string): Record<string, unknown> {
  const { configPath: _c, userConfigPath: _u, ...rest } = unstable_readConfig({ config: path })
  return rest
}

describe('the benchmarks’ wrangler config', () => {
  it('is wrangler.toml without its assets, everything else as wrangler reads it there', () => {
    const args = wranglerConfig(repoRoot, false)
    expect(args).toEqual(['--config', join(repoRoot, '.wrangler-bench.toml')])
    const { assets, ...own } = readConfig(join(repoRoot, 'wrangler.toml'))
    expect(assets).toBeDefined()
    expect(readConfig(args[1]!)).toEqual({ ...own, assets: undefined })
  })

  it('is wrangler.toml itself when the router is kept', () => {
    expect(wranglerConfig(repoRoot, true)).toEqual([])
  })

  it('drops a last table to the end of the file, and answers undefined when there is none', () => {
    expect(withoutAssets('name = "x"\n[assets]\ndirectory = "d"\nrun_worker_first = true\n')).toBe('name = "x"')
    expect(withoutAssets('name = "x"\n[vars]\nA = "1"\n')).toBeUndefined()
  })
})
