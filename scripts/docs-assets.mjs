// Copies Scalar's standalone API-reference bundle (@scalar/api-reference, a pinned devDependency) into the Worker's
// static assets (worker/assets/docs/scalar.js, not in git), where GET /docs loads it from this origin: no CDN at run
// time. npm runs it after every install (prepare, with --optional: an install without devDependencies, such as the
// relay's container, has no bundle and needs none) and before start, test and deploy; it copies only when the bundle
// changed.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const SCALAR_SOURCE = join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js')
export const SCALAR_TARGET = join(root, 'worker/assets/docs/scalar.js')

const same = (a, b) => existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(SCALAR_SOURCE)) {
    console.error('[docs-assets] @scalar/api-reference is not installed: run npm install (its devDependencies included)')
    process.exit(process.argv.includes('--optional') ? 0 : 1)
  }
  if (!same(SCALAR_SOURCE, SCALAR_TARGET)) {
    mkdirSync(dirname(SCALAR_TARGET), { recursive: true })
    copyFileSync(SCALAR_SOURCE, SCALAR_TARGET)
    console.log('[docs-assets] copied Scalar’s API reference bundle to worker/assets/docs/scalar.js')
  }
}
