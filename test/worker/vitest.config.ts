// Worker tests run inside workerd against real D1 and real Durable Objects, with the migrations drizzle-kit wrote.
// The upstreams are local fakes reached through the same base-URL settings production uses.
import { createServer } from 'node:net'
import path from 'node:path'
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin'
import { defineProject } from 'vitest/config'
import { startFakeSmsGateway } from '../fixtures/fake-sms-gateway'
import { startFakeTwilio } from '../fixtures/fake-twilio'

const root = path.join(import.meta.dirname, '../..')

/** A free local port for the fake Graph API: the Worker's bindings are fixed here, before globalSetup starts it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

export default defineProject(async () => {
  // The SMS providers' fakes live as long as the test process (their sockets are unref'd); the tests drive them
  // through their /__fake control API.
  const [twilio, gateway] = await Promise.all([startFakeTwilio(), startFakeSmsGateway()])
  process.env.FAKE_GRAPH_PORT ??= String(await freePort())
  const fakeGraph = `http://127.0.0.1:${process.env.FAKE_GRAPH_PORT}`
  return {
    root,
    plugins: [
      cloudflareTest({
        wrangler: { configPath: path.join(root, 'wrangler.toml') },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: await readD1Migrations(path.join(root, 'schema/migrations')),
            ADMIN_TOKEN: 'test-admin-token-for-the-workerd-suite',
            ENCRYPTION_KEY: 'test-encryption-key',
            ALLOW_LOOPBACK_URLS: 'true',
            // Production waits 10 s for a receiver; the timeout tests use a short one.
            DELIVERY_TIMEOUT_MS: '400',
            // One browser origin admitted to /mcp, so both sides of the Origin check are tested.
            MCP_ALLOWED_ORIGINS: 'https://inspector.example',
            // A connect with a pairing code waits this long for the relay's code; scripted relays that never send one
            // would otherwise hold each such test for the production 8 s.
            ALPHA_PAIRING_CODE_WAIT_MS: '1500',
            TWILIO_API_URL: twilio.url,
            SMS_GATEWAY_URL: `${gateway.url}/3rdparty/v1`,
            // The page inbox talks to the local fake Graph API (test/fixtures/fake-graph.ts), API and dialog alike.
            GRAPH_API_URL: fakeGraph,
            GRAPH_DIALOG_URL: fakeGraph,
            GRAPH_API_VERSION: 'v25.0',
          },
        },
      }),
    ],
    test: {
      name: 'worker',
      dir: path.join(root, 'test/worker'),
      include: ['**/*.test.ts'],
      setupFiles: [path.join(root, 'test/worker/setup.ts')],
      globalSetup: [path.join(root, 'test/fixtures/receiver-global-setup.ts'), path.join(root, 'test/fixtures/fake-graph-global-setup.ts')],
      testTimeout: 20_000,
      // The fuzz suites (test/worker/fuzz): a fixed seed and a bounded run here; `npm run fuzz` sets these.
      provide: {
        fuzz: {
          seed: Number(process.env.FUZZ_SEED) || 14_05,
          runs: Number(process.env.FUZZ_RUNS) || 8,
          path: process.env.FUZZ_PATH ?? '',
          report: process.env.FUZZ_REPORT === '1',
        },
      },
    },
  }
})
