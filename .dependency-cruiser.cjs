/**
 * Import rules, checked by `npm test` (dependency-cruiser): no module cycles anywhere, and imports between the
 * folders of worker/ flow one way, from the composition root down to the leaves, so no folder cycle can form.
 * relay/ and worker/ never import each other: what both need lives in schema/ (shapes) or common/ (logic).
 * Type-only imports are exempt from the layering (a stub's type may name the class it reaches).
 */
// Top to bottom: a folder may import any folder below it, never one above it.
const WORKER_LAYERS = [
  ['index', 'app'],
  ['routes', 'mcp', 'middleware'],
  ['messaging'],
  ['channels'],
  ['relay'],
  ['account'],
  ['webhooks'],
  ['events', 'media'],
  ['db'],
  ['lib', 'config', 'errors', 'env', 'plans', 'validate'],
]

const unit = (name) => `^worker/${name}(/|\\.ts$)`

const layerRules = WORKER_LAYERS.flatMap((layer, i) => {
  const above = WORKER_LAYERS.slice(0, i).flat()
  if (above.length === 0) return []
  return layer.map((name) => ({
    name: `worker-${name}-below-${above.join('-')}`,
    comment: `worker/${name} sits below ${above.join(', ')} and must not import them (see .dependency-cruiser.cjs)`,
    severity: 'error',
    from: { path: unit(name) },
    to: { path: above.map(unit), dependencyTypesNot: ['type-only'] },
  }))
})

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module cycle: split the piece both sides need into its own module, lower down.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
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
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['worker/worker-configuration\\.d\\.ts$', 'schema/drizzle\\.config\\.ts$', '^worker/assets/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
