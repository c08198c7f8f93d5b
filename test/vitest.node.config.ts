// Node tests: the relay's and common/'s units, and the black-box e2e suite that starts the real local server (wrangler dev).
import path from 'node:path'
import { defineProject } from 'vitest/config'

export default defineProject({
  root: path.join(import.meta.dirname, '..'),
  test: {
    name: 'node',
    dir: path.join(import.meta.dirname, '..'),
    environment: 'node',
    include: [
      'test/relay/**/*.test.ts',
      'test/common/**/*.test.ts',
      'test/client/**/*.test.ts',
      'test/e2e/**/*.test.ts',
      'test/scripts/**/*.test.ts',
      'test/bench/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e files each start a wrangler dev; running them one at a time keeps a 2-core machine responsive.
    fileParallelism: false,
  },
})
