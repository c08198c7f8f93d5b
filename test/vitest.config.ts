// One `vitest run` for every runtime: the Worker in workerd, the relay in Node, and the black-box e2e suite.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['test/worker/vitest.config.ts', 'test/vitest.node.config.ts'],
    // Structured logs (the relay hub's, for `wrangler tail`; the relay's pino lines) would bury the report.
    onConsoleLog: (log) => !log.includes('"component":"relay-hub"'),
  },
})
