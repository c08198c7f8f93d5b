/**
 * `npm start`'s outbound guard end to end: the Worker runs through scripts/dev-worker.mjs (the launcher npm start
 * uses) with a resolver standing in for DNS. A webhook whose name resolves to this machine (internal.test → a
 * loopback address, as 127.0.0.1.nip.io would) never reaches the https service listening there and the delivery
 * fails; the same service under a name that resolves to an address counted as public (public.test) gets it.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isGlobalAddress } from '../../common/address-ranges'
import { type DevWorker, startDevWorker } from '../../scripts/dev-worker.mjs'
import { freePort } from './local-server'

/** The webhook URL check admits https on 443 and 8443 only; a random loopback address keeps 8443 ours. */
const PORT = 8443
const net = `127.${randomInt(1, 255)}.${randomInt(0, 256)}`
const internalIp = `${net}.1`
const publicStandIn = `${net}.2`

const dir = mkdtempSync(join(tmpdir(), 'outbound-guard-'))
const hits: Array<{ host: string; path: string }> = []
const servers: Server[] = []
let worker: DevWorker
let base: string
let key: string

function selfSignedCert(): { key: string; cert: string } {
  const k = join(dir, 'key.pem')
  const c = join(dir, 'cert.pem')
  const run = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', k, '-out', c, '-days', '1'].concat([
      '-subj',
      '/CN=internal.test',
      '-addext',
      'subjectAltName=DNS:internal.test,DNS:public.test',
    ]),
    { encoding: 'utf8' }
  )
  if (run.status !== 0) throw new Error(`openssl failed: ${run.stderr}`)
  return { key: readFileSync(k, 'utf8'), cert: readFileSync(c, 'utf8') }
}

beforeAll(async () => {
  const tls = selfSignedCert()
  for (const ip of [internalIp, publicStandIn]) {
    const server = createServer(tls, (req, res) => {
      hits.push({ host: req.headers.host ?? '', path: req.url ?? '' })
      req.resume()
      res.writeHead(200).end('ok')
    })
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(PORT, ip, resolve))
    servers.push(server)
  }

  const adminToken = `adm_${randomBytes(24).toString('hex')}`
  const envFile = join(dir, 'vars.env')
  writeFileSync(envFile, `ADMIN_TOKEN=${adminToken}\nENCRYPTION_KEY=${randomBytes(32).toString('base64')}\nALLOW_LOOPBACK_URLS=true\n`)
  const answers: Record<string, string> = { 'internal.test': internalIp, 'public.test': publicStandIn }
  worker = await startDevWorker({
    port: await freePort(),
    persistTo: join(dir, 'state'),
    envFiles: [envFile],
    // As npm start runs: loopback URLs allowed for local receivers. Names must still resolve to public addresses.
    allowLoopback: true,
    guard: {
      resolve: async (hostname) => {
        const address = answers[hostname]
        if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
        return [{ address, family: 4 }]
      },
      isAllowedAddress: (ip) => isGlobalAddress(ip) || ip === publicStandIn,
      tls: { ca: tls.cert },
    },
    logLevel: 'error',
  })
  base = (await worker.url).origin
  const admin = async (path: string) => {
    const res = await fetch(base + path, { method: 'POST', headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' }, body: '{}' })
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { id: string; key: string }
  }
  const tenant = await admin('/admin/tenants')
  key = (await admin(`/admin/tenants/${tenant.id}/keys`)).key
}, 120_000)

afterAll(async () => {
  await worker?.dispose()
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  rmSync(dir, { recursive: true, force: true })
})

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as T }
}

type TestDelivery = { delivered: boolean; status_code: number | null; failure_type: string | null }

/** Subscribes a webhook at `url` and sends it a test delivery, which goes out exactly as a real one would. */
async function deliverTo(name: string, url: string): Promise<TestDelivery> {
  const created = await api('POST', '/webhooks', { url, subscribed_to: ['message.received'], name })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  const sent = await api<TestDelivery>('POST', `/webhooks/${name}/test`, {})
  expect(sent.status).toBe(200)
  return sent.json
}

describe('npm start refuses names that resolve to private addresses', () => {
  it('a webhook at a name resolving to loopback fails and the service there receives nothing', async () => {
    const result = await deliverTo('internal', `https://internal.test:${PORT}/hook`)
    expect(result.delivered).toBe(false)
    expect(hits).toEqual([])
  })

  it('the same service under a name resolving to a public address receives the delivery', async () => {
    const result = await deliverTo('public', `https://public.test:${PORT}/hook`)
    expect(result).toMatchObject({ delivered: true, status_code: 200 })
    expect(hits).toEqual([{ host: `public.test:${PORT}`, path: '/hook' }])
  })
})
