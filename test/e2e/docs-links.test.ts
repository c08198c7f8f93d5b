/** Links between the pages of README.md and docs/**: every relative link and #anchor resolves (no server needed). */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { brokenLinks, docPages, headingAnchors } from './docs-markdown'
import { repoRoot } from './local-server'

const pages = docPages(repoRoot).map((file) => ({ file, text: readFileSync(file, 'utf8') }))
/** The served OpenAPI document (its descriptions reach the reference page and the typed client), as generated. */
const openApi = { file: join(repoRoot, 'client', 'openapi.json'), text: readFileSync(join(repoRoot, 'client', 'openapi.json'), 'utf8') }

describe('links between the pages', () => {
  it('every relative link and #anchor in README.md and docs/ resolves', () => {
    expect(pages.flatMap((p) => brokenLinks(repoRoot, p.file, p.text))).toEqual([])
  })

  it('name nothing a reader does not have: no spec sections or issue numbers (the OpenAPI descriptions included)', () => {
    const privateRef = /\bspec (part|§|\d)|\bspec §|\bthe spec's\b|\bissue \d+|§\s?\d/i
    const found = [...pages, openApi].flatMap((p) =>
      p.text.split('\n').flatMap((line, i) => (privateRef.test(line) ? [`${p.file.slice(repoRoot.length + 1)}:${i + 1}: ${line.trim()}`] : []))
    )
    expect(found).toEqual([])
  })

  it('reports a missing file and a missing anchor, and ignores links in code', () => {
    const md =
      '# Top\n\n## Trying alpha offline (`--sim`)\n\n[ok](#trying-alpha-offline---sim) [bad](#nope) [gone](docs/none.md)\n`[x](y.md)`\n```\n[z](z.md)\n```\n'
    const file = join(repoRoot, 'README.md')
    expect(headingAnchors(md)).toEqual(new Set(['top', 'trying-alpha-offline---sim']))
    expect(brokenLinks(repoRoot, file, md).map((b) => b.target)).toEqual(['#nope', 'docs/none.md'])
  })
})
