/**
 * The generated tables of the docs (scripts/docs-tables.ts) cannot drift: every page matches a fresh render of the
 * code's constants and schemas, a changed constant shows up as a stale page, the rate-limit rules match
 * wrangler.toml, and the error table lists exactly the codes the Worker raises, with the statuses it raises them with.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { renderErrors, SOURCES, staleSections, withSection } from '../../scripts/docs-tables'
import { bindingLimit, RATE_LIMITS } from '../../worker/lib/abuse-limits'
import { ERROR_CODES } from '../../worker/lib/error-codes'

const root = join(import.meta.dirname, '../..')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

describe('generated docs tables', () => {
  it('are current on every page (run npm run docs after changing a limit, an error code or an event)', () => {
    expect(staleSections(root)).toEqual([])
  })

  it('report a page stale when a limit constant changes', () => {
    const planted = { ...SOURCES, rateLimits: { ...RATE_LIMITS, RL_API_KEY: { ...RATE_LIMITS.RL_API_KEY, limit: 6001 } } }
    expect(staleSections(root, { sources: planted })).toEqual(['docs/api.md#abuse-limits'])
    const plan = { ...SOURCES, plan: { ...SOURCES.plan, sendsPerDay: 51 } }
    expect(staleSections(root, { sources: plan })).toEqual(['docs/api.md#account-limits'])
  })

  it('refuse a page without its markers', () => {
    expect(() => withSection('# Errors\n', 'docs/errors.md', 'errors', renderErrors())).toThrow(/no <!-- generated:errors/)
  })
})

describe('the rate-limit rules', () => {
  it('match the [[ratelimits]] of wrangler.toml, name by name', () => {
    const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
    const bindings = [...toml.matchAll(/\[\[ratelimits\]\]\s*\nname = "(\w+)"\s*\nnamespace_id = "\d+"\s*\nsimple = \{ limit = (\d+), period = (\d+) \}/g)].map(
      (m) => [m[1], { limit: Number(m[2]), periodS: Number(m[3]) }] as const
    )
    expect(Object.fromEntries(bindings)).toEqual(
      Object.fromEntries(Object.entries(RATE_LIMITS).map(([name, r]) => [name, { limit: bindingLimit(r), periodS: r.periodS }]))
    )
  })
})

describe('the error table', () => {
  const files = sourceFiles(join(root, 'worker')).filter((f) => !f.endsWith('lib/error-codes.ts'))
  const sources = files.map((f) => ({ file: relative(root, f), text: readFileSync(f, 'utf8') }))

  it('lists no code the Worker never raises', () => {
    const unused = Object.keys(ERROR_CODES).filter((code) => !sources.some((s) => s.text.includes(`'${code}'`)))
    expect(unused).toEqual([])
  })

  it('gives every code the statuses the Worker raises it with', () => {
    const wrong: string[] = []
    for (const s of sources) {
      for (const m of s.text.matchAll(/new ApiError\(\s*(\d{3}),\s*'([a-z0-9_]+)'/g)) {
        const status = Number(m[1])
        const entry: { status: readonly number[] } | undefined = (ERROR_CODES as Record<string, { status: readonly number[] }>)[m[2]!]
        if (!entry?.status.includes(status)) wrong.push(`${s.file}: ${m[2]} ${status}`)
      }
    }
    expect(wrong).toEqual([])
  })
})
