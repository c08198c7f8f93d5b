/**
 * The published webhook-verification snippets (docs/examples/webhooks) as commands the tests run: Node and Python
 * always, Go and PHP where their toolchain is installed. Each reads {secret, headers, body, now_s} on stdin and exits
 * 0 when it accepts the delivery, 1 when it refuses it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoRoot } from './local-server'

export type Snippet = { name: string; file: string; command: () => string[] }

const examples = join(repoRoot, 'docs/examples/webhooks')
const has = (bin: string, ...args: string[]) => spawnSync(bin, args, { stdio: 'ignore' }).status === 0

let goBinary: string | undefined
/** The Go snippet, compiled once per test process (go run would compile it for every call). */
function goCommand(): string[] {
  if (!goBinary) {
    const out = join(mkdtempSync(join(tmpdir(), 'verify-go-')), 'verify')
    const built = spawnSync('go', ['build', '-o', out, join(examples, 'verify_signature.go')], {
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    })
    if (built.status !== 0) throw new Error(`go build of the Go snippet failed: ${built.stderr}`)
    goBinary = out
  }
  return [goBinary]
}

/** Every snippet whose toolchain this machine has, in a fixed order. */
export function availableSnippets(): Snippet[] {
  const all: Array<Snippet & { available: () => boolean }> = [
    { name: 'Node', file: 'verify-signature.mjs', available: () => true, command: () => [process.execPath, join(examples, 'verify-signature.mjs')] },
    {
      name: 'Python',
      file: 'verify_signature.py',
      available: () => has('python3', '--version'),
      command: () => ['python3', join(examples, 'verify_signature.py')],
    },
    { name: 'Go', file: 'verify_signature.go', available: () => has('go', 'version'), command: goCommand },
    { name: 'PHP', file: 'verify_signature.php', available: () => has('php', '--version'), command: () => ['php', join(examples, 'verify_signature.php')] },
  ]
  return all.filter((s) => s.available())
}

/**
 * Runs one snippet on a delivery; true when it accepts it. Asynchronous on purpose: a blocking spawn would freeze the
 * event loop, and a keep-alive socket the server closed meanwhile would then be reused for the next API call.
 */
export function snippetAccepts(snippet: Snippet, delivery: { secret: string; headers: Record<string, string>; body: string; nowS?: number }): Promise<boolean> {
  const [bin, ...args] = snippet.command()
  return new Promise((resolve, reject) => {
    const child = spawn(bin!, args, { stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0 && code !== 1) reject(new Error(`${snippet.name} snippet crashed (${code}): ${stderr}`))
      else resolve(code === 0)
    })
    child.stdin.end(JSON.stringify({ secret: delivery.secret, headers: delivery.headers, body: delivery.body, now_s: delivery.nowS }))
  })
}
