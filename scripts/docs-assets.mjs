// Builds the Worker's static assets (wrangler.toml [assets]): the API reference's scripts under /docs/, which GET
// /docs loads from this origin (no CDN at run time). They are Scalar's standalone bundle (@scalar/api-reference, a
// pinned devDependency) and our starter worker/assets/docs/start.js, copied into a generated directory under
// node_modules/.cache: the third-party bundle never sits in the source tree (a minified file is not our code to read,
// lint or scan). npm runs this after every install (prepare, with --optional: an install without devDependencies,
// such as the relay's container, has no bundle and needs none) and before start, test and deploy; it copies only
// what changed.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** The directory wrangler.toml's [assets] serves (generated; not in git). */
export const ASSETS_DIR = join(root, 'node_modules/.cache/gateway-assets')
export const SCALAR_SOURCE = join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js')
const COPIES = [
  [SCALAR_SOURCE, join(ASSETS_DIR, 'docs/scalar.js')],
  [join(root, 'worker/assets/docs/start.js'), join(ASSETS_DIR, 'docs/start.js')],
]

const same = (a, b) => existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(SCALAR_SOURCE)) {
    console.error('[docs-assets] @scalar/api-reference is not installed: run npm install (its devDependencies included)')
    process.exit(process.argv.includes('--optional') ? 0 : 1)
  }
  for (const [from, to] of COPIES) {
    if (same(from, to)) continue
    mkdirSync(dirname(to), { recursive: true })
    copyFileSync(from, to)
    console.log(`[docs-assets] copied ${from.slice(root.length + 1)} to the Worker's static assets`)
  }
}
