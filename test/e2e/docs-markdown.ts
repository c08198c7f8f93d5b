/**
 * Reads the project's Markdown for the docs tests: the pages (README.md and docs/**), the fenced blocks marked
 * ```sh runnable (or another kind, such as the simulator's `runnable-sim`), and the relative links with their #anchors
 * (GitHub's heading slugs), so a page cannot point nowhere. `runBlock` runs a block as a reader pastes it.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

export type RunnableBlock = { file: string; line: number; code: string }
export type BrokenLink = { file: string; line: number; target: string; why: string }

/** README.md, then every .md under docs/ in name order (the order a reader meets them doesn't matter to the check). */
export function docPages(root: string): string[] {
  const pages = [join(root, 'README.md')]
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.md')) pages.push(path)
    }
  }
  walk(join(root, 'docs'))
  return pages
}

/** Lines outside fenced code blocks, with their 1-based numbers; inline code spans blanked so `[a](b)` in code is not a link. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = []
  let fence: string | null = null
  markdown.split('\n').forEach((text, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(text)
    if (m) {
      if (fence === null) fence = m[1]!
      else if (m[1]!.startsWith(fence)) fence = null
      return
    }
    if (fence === null) out.push({ line: i + 1, text: text.replace(/`[^`]*`/g, '``') })
  })
  return out
}

export function runnableBlocks(file: string, markdown: string, kind = 'runnable'): RunnableBlock[] {
  const blocks: RunnableBlock[] = []
  const lines = markdown.split('\n')
  const opening = new RegExp(`^\`\`\`(sh|bash)\\s+${kind}\\s*$`)
  for (let i = 0; i < lines.length; i++) {
    if (!opening.test(lines[i]!)) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    blocks.push({ file, line: start + 1, code: body.join('\n') })
  }
  return blocks
}

/**
 * Runs a block under `set -euo pipefail` with only PATH, HOME and `vars` in its environment, after replacing what a
 * reader would replace by hand (`replace`: the local URL, key placeholders).
 */
export function runBlock(
  code: string,
  vars: Record<string, string>,
  replace: ReadonlyArray<readonly [string, string]>,
  timeoutMs = 30_000
): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const script = `set -euo pipefail\n${replace.reduce((text, [from, to]) => text.replaceAll(from, to), code)}`
  // Asynchronous: a server in this process (the simulator, a receiver) must keep answering while the block runs.
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: join(import.meta.dirname, '../..'),
      timeout: timeoutMs,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...vars },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += String(d)))
    child.stderr.on('data', (d) => (stderr += String(d)))
    child.on('error', reject)
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }))
  })
}

/** An error body of either of the API's shapes in what a block printed. */
export const ERROR_BODY = /"success":\s*false|"error_code":\s*"/

/** GitHub's anchor for a heading: lower case, punctuation dropped (not - or _), spaces to hyphens; repeats get -1, -2. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const { text } of proseLines(markdown.replace(/`([^`]*)`/g, '$1'))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)
    if (!m) continue
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** Every relative link (and image) in `file` whose file does not exist or whose #anchor names no heading there. */
export function brokenLinks(root: string, file: string, markdown: string): BrokenLink[] {
  const broken: BrokenLink[] = []
  const shown = relative(root, file)
  for (const { line, text } of proseLines(markdown)) {
    for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
      const [path, anchor] = target.split('#', 2) as [string, string | undefined]
      const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
      if (!existsSync(dest)) {
        broken.push({ file: shown, line, target, why: 'no such file' })
        continue
      }
      const targetText = path === '' ? markdown : dest.endsWith('.md') ? readFileSync(dest, 'utf8') : null
      if (anchor !== undefined && targetText !== null && !headingAnchors(targetText).has(anchor)) {
        broken.push({ file: shown, line, target, why: `no heading #${anchor} in ${relative(root, dest)}` })
      }
    }
  }
  return broken
}
