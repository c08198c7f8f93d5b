// Test-only bindings added by test/worker/vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import('cloudflare:test').D1Migration[]
  }
}

// Vite's `?raw` imports: a docs page as text, for tests that hold a page to the code.
declare module '*.md?raw' {
  const text: string
  export default text
}
