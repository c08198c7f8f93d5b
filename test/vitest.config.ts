// One `vitest run` for every runtime: the Worker in workerd, the relay in Node, and the black-box e2e suite.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['test/worker/vitest.config.ts', 'test/vitest.node.config.ts'],
  },
})
