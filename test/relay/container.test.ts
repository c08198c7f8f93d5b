/**
 * relay/Dockerfile and relay/compose.yaml, checked without a container engine (none runs on the CI machines, and no
 * base image can be pulled there): dockerfile-utils (the Docker language server's validator) finds no problem, the
 * image is multi-stage, runs as a non-root user with a HEALTHCHECK on /healthz and one volume (the media spool),
 * documents every variable relay/config.ts reads, and ships every package the relay imports; the build context's
 * ignore file keeps what the relay needs.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { validate } from 'dockerfile-utils'
import { describe, expect, it } from 'vitest'
import { RelayEnv } from '../../relay/config'

const root = join(import.meta.dirname, '../..')
const dockerfile = readFileSync(join(root, 'relay/Dockerfile'), 'utf8')
const ignore = readFileSync(join(root, 'relay/Dockerfile.dockerignore'), 'utf8')
const compose = readFileSync(join(root, 'relay/compose.yaml'), 'utf8')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> }

/** Instructions with their arguments, continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/)
      return { op: op.toUpperCase(), args: rest.join(' ') }
    })
}

/** Packages reached from relay/main.ts through its value imports (type-only imports leave no trace at run time). */
function runtimePackages(entry: string): Set<string> {
  const packages = new Set<string>()
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'/gm)) {
      const spec = m[1]!
      if (spec.startsWith('.')) {
        const base = join(dirname(file), spec)
        visit([`${base}.ts`, join(base, 'index.ts'), base].find((p) => existsSync(p) && statSync(p).isFile())!)
      } else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
    }
  }
  visit(entry)
  return packages
}

describe('relay/Dockerfile', () => {
  const ops = instructions(dockerfile)
  const finalStage = ops.slice(ops.map((o) => o.op).lastIndexOf('FROM'))

  it('passes the Dockerfile validator with no error or warning', () => {
    expect(validate(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([])
  })

  it('builds in stages and runs the relay as a non-root user, with a HEALTHCHECK on /healthz', () => {
    expect(ops.filter((o) => o.op === 'FROM').length).toBeGreaterThanOrEqual(2)
    const user = finalStage.filter((o) => o.op === 'USER').at(-1)?.args
    expect(user).toBeDefined()
    expect(user).not.toMatch(/^(root|0)(:|$)/)
    expect(finalStage.find((o) => o.op === 'HEALTHCHECK')?.args).toContain('/healthz')
    expect(finalStage.find((o) => o.op === 'ENTRYPOINT')?.args).toBe('["node", "--max-semi-space-size=16", "--import", "tsx", "relay/main.ts"]')
    // tsx comes at the version package.json pins.
    expect(dockerfile).toContain("require('./package.json').devDependencies.tsx")
    expect(pkg.devDependencies.tsx).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it('has one volume, the media spool, which TMPDIR points at', () => {
    const volumes = finalStage.filter((o) => o.op === 'VOLUME').map((o) => o.args)
    expect(volumes).toEqual(['["/var/spool/relay"]'])
    expect(finalStage.find((o) => o.op === 'ENV')?.args).toContain('TMPDIR=/var/spool/relay')
  })

  it('documents every variable the relay reads', () => {
    const comments = dockerfile
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join('\n')
    expect(Object.keys(RelayEnv.shape).filter((name) => !new RegExp(`^#\\s+${name}\\s`, 'm').test(comments))).toEqual([])
  })

  it('ships every package the relay imports at run time (production dependencies, tsx added by the image)', () => {
    const packages = runtimePackages(join(root, 'relay/main.ts'))
    expect(packages).toContain('@whiskeysockets/baileys')
    expect(packages).toContain('telegram')
    expect([...packages].filter((p) => !(p in pkg.dependencies))).toEqual([])
  })

  it('keeps the relay’s folders and the lock file in the build context, and nothing else', () => {
    const kept = ignore
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1))
    expect(kept.sort()).toEqual(['common/', 'package-lock.json', 'package.json', 'relay/', 'schema/', 'tsconfig.json'])
    expect(ignore).toMatch(/^\*$/m)
  })
})

describe('relay/compose.yaml', () => {
  it('builds relay/Dockerfile from the root, mounts the spool, publishes health on loopback and outwaits the drain', () => {
    expect(compose).toMatch(/context: \.\.\n\s+dockerfile: relay\/Dockerfile/)
    expect(compose).toMatch(/- relay-spool:\/var\/spool\/relay/)
    expect(compose).toMatch(/- "127\.0\.0\.1:8790:8790"/)
    const grace = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1])
    expect(grace * 1000).toBeGreaterThan(RelayEnv.shape.RELAY_DRAIN_TIMEOUT_MS.parse(undefined))
  })
})
