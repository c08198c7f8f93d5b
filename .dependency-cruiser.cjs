/**
 * Import rules, checked by `npm run lint` (dependency-cruiser), type-only imports included: an interface lives in
 * the lowest layer that uses it. No module cycles anywhere; every folder and top-level module of worker/, relay/,
 * schema/ and common/ belongs to a layer, and imports between them flow one way, from the composition root down to
 * the leaves, so no folder cycle can form. relay/ and worker/ never import each other: what both need lives in schema/ (shapes)
 * or common/ (logic). Inside worker/, the path says which isolate runs a module (docs/ARCHITECTURE.md, "Which
 * isolate runs a module"): the Worker reaches a Durable Object's folder for types only, or for its `*.shared.ts`.
 */
// Top to bottom: a unit may import any unit of its own layer or below, never one above. A unit is a folder or a
// top-level module (`index` is worker/index.ts).
const LAYERS = {
  worker: [
    ['index'],
    ['app'],
    ['routes', 'mcp', 'middleware'],
    ['messaging'],
    ['channels'],
    ['relay', 'shards'],
    ['account'],
    ['webhooks'],
    ['events', 'media'],
    ['safety'],
    ['db'],
    ['lib', 'validate', 'config', 'plans', 'errors'],
    ['env'],
  ],
  relay: [
    ['main'],
    ['relay'],
    ['drivers', 'health'],
    ['sim', 'alpha', 'beta'],
    ['sessions', 'handoff', 'state-filter'],
    ['link'],
    ['media-kind', 'metrics', 'connector', 'config', 'crypto', 'log'],
  ],
  schema: [['api'], ['events', 'frames', 'd1', 'media', 'phone', 'passkey']],
  common: [['public-url', 'address-ranges', 'media']],
}

const unit = (root, name) => `^${root}/${name}(/|\\.ts$)`

function layerRules(root, layers) {
  return layers.flatMap((layer, i) => {
    const above = layers.slice(0, i).flat()
    if (above.length === 0) return []
    return layer.map((name) => ({
      name: `${root}-${name}-below-${above.join('-')}`,
      comment: `${root}/${name} sits below ${above.join(', ')} and must not import them, types included (see .dependency-cruiser.cjs)`,
      severity: 'error',
      from: { path: unit(root, name) },
      to: { path: above.map((n) => unit(root, n)) },
    }))
  })
}

/** A module of a root that belongs to no layer: a new folder must be given its place. */
function everyUnitLayered(root, layers) {
  const known = layers.flat().map((n) => unit(root, n))
  return {
    name: `${root}-unit-in-a-layer`,
    comment: `every folder and top-level module of ${root}/ belongs to a layer in .dependency-cruiser.cjs`,
    severity: 'error',
    from: { path: `^${root}/`, pathNot: known },
    to: {},
  }
}

/** The Worker's side: code that runs in the Worker in front of the Durable Objects (a channel's outbound.ts runs inside the AccountDO). */
const WORKER_SIDE = ['^worker/(app|routes|mcp|middleware|messaging)(/|\\.ts$)', '^worker/channels/(?![^/]+/outbound\\.ts$)']
/** Code that runs in a Durable Object; the Worker imports its types, and values only from its `*.shared.ts`. */
const OBJECT_SIDE = '^worker/(account|relay|shards)/'
const SHARED = '\\.shared\\.ts$'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module cycle (type-only imports count): split the piece both sides need into its own module, lower down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'relay-not-worker',
      comment: 'The relay runs in Node on a VPS; code both sides need goes to schema/ or common/.',
      severity: 'error',
      from: { path: '^relay/' },
      to: { path: '^worker/' },
    },
    {
      name: 'worker-not-relay',
      comment: 'The Worker never imports the Node relay.',
      severity: 'error',
      from: { path: '^worker/' },
      to: { path: '^relay/' },
    },
    {
      name: 'shared-is-leaf',
      comment: 'schema/ and common/ are shared by the Worker and the relay and import neither.',
      severity: 'error',
      from: { path: '^(schema|common)/' },
      to: { path: '^(worker|relay)/' },
    },
    {
      name: 'worker-side-not-object-code',
      comment:
        'Worker-side code reaches a Durable Object through its stub (lib/objects.ts): from account/ or relay/ it imports types, and values only from a *.shared.ts (shapes and pure functions both sides use)',
      severity: 'error',
      from: { path: WORKER_SIDE },
      to: { path: OBJECT_SIDE, pathNot: SHARED, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'shared-holds-no-object-code',
      comment: 'A *.shared.ts module is imported by both sides, so it holds only shapes and pure functions: no value from its object\'s other modules.',
      severity: 'error',
      from: { path: SHARED },
      to: { path: OBJECT_SIDE, pathNot: SHARED, dependencyTypesNot: ['type-only'] },
    },
    ...Object.entries(LAYERS).flatMap(([root, layers]) => [...layerRules(root, layers), everyUnitLayered(root, layers)]),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['worker/worker-configuration\\.d\\.ts$', 'schema/drizzle\\.config\\.ts$', 'schema/migrations/', '^worker/assets/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
