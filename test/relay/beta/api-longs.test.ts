/**
 * relay/beta/api-longs.ts: GramJS's serialiser writes longs with tl-longs' writer exactly when tl-longs was imported
 * before `telegram`, as relay/main.ts does; each case runs in a fresh Node process, since the order is per process.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../../e2e/local-server'

/** What fastLongsInApi answers in a new process (Node 24 and tsx, as the relay runs) after `imports`, in order. */
function answerAfter(imports: string[]): string {
  const source = [
    ...imports.map((i) => `import ${JSON.stringify(i)}`),
    "const { fastLongsInApi } = await import('./relay/beta/api-longs.ts')",
    'console.log(fastLongsInApi())',
  ].join('\n')
  return execFileSync(join(repoRoot, 'node_modules', 'node', 'bin', 'node'), ['--import', 'tsx', '--input-type=module', '-e', source], {
    cwd: repoRoot,
    encoding: 'utf8',
  }).trim()
}

describe('fastLongsInApi', () => {
  it('is true when tl-longs comes before telegram, as in relay/main.ts', () => {
    expect(answerAfter(['./relay/beta/tl-longs.ts', 'telegram'])).toBe('true')
  })

  it('is false when telegram was loaded first', () => {
    expect(answerAfter(['telegram', './relay/beta/tl-longs.ts'])).toBe('false')
  })

  it('relay/main.ts imports tl-longs before any other module (it checks fastLongsInApi at start)', () => {
    const imports = [...readFileSync(join(repoRoot, 'relay', 'main.ts'), 'utf8').matchAll(/^import .*?'([^']+)'$/gm)].map((m) => m[1])
    expect(imports[0]).toBe('./beta/tl-longs')
  })
})
