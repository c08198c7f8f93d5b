// workerd provides node:crypto under nodejs_compat; the worker test project has no @types/node (its globals would
// clash with the Workers types), so this declares only what the tests use: HMAC, as a receiver computes it.
declare module 'node:crypto' {
  export function createHmac(algorithm: 'sha256', key: string): { update(data: string): { digest(encoding: 'hex'): string } }
}
