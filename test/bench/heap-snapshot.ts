/**
 * Reads V8 heap snapshots (`.heapsnapshot`, as `node --heapsnapshot-signal` or `v8.writeHeapSnapshot` write them) and
 * says where memory sits: self size and count per constructor, retained size per constructor (from the dominator
 * tree), and the difference between two snapshots divided by how many sessions were added between them. Memory per
 * idle session does not depend on the machine's load, so this is the figure to compare runs by; `npm run bench --
 * relay` takes the two snapshots in its idle phase when RELAY_BENCH_HEAP=1. Also runnable on two files:
 * `tsx test/bench/heap-snapshot.ts before.heapsnapshot after.heapsnapshot 979`.
 */
import { readFileSync } from 'node:fs'

type Raw = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

export type ClassCost = { name: string; count: number; selfBytes: number; retainedBytes: number }
export type HeapSummary = { totalBytes: number; nodes: number; classes: Map<string, ClassCost> }

/** `(closure) fn`, `Object`, `(string)`: the name a DevTools summary groups a node under. */
function groupName(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
      return name.split(' ')[0] || name
    case 'closure':
      return `(closure) ${name}`
    case 'hidden':
    case 'code':
    case 'array':
    case 'synthetic':
    case 'object shape':
      return `(${type}) ${name.length > 40 ? `${name.slice(0, 40)}…` : name}`
    default:
      return `(${type})`
  }
}

/**
 * Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy over a reverse postorder from the
 * root (node 0); weak edges do not keep anything alive, so they are not followed.
 */
function dominators(n: number, firstEdge: Int32Array, targets: Int32Array, weak: Uint8Array): { idom: Int32Array; order: Int32Array } {
  const post = new Int32Array(n).fill(-1)
  const order = new Int32Array(n)
  let count = 0
  const stack = new Int32Array(n)
  const cursor = new Int32Array(n)
  const seen = new Uint8Array(n)
  let sp = 0
  stack[sp++] = 0
  seen[0] = 1
  cursor[0] = firstEdge[0]!
  while (sp > 0) {
    const v = stack[sp - 1]!
    const e = cursor[v]!
    if (e < firstEdge[v + 1]!) {
      cursor[v] = e + 1
      const w = targets[e]!
      if (!weak[e] && !seen[w]) {
        seen[w] = 1
        cursor[w] = firstEdge[w]!
        stack[sp++] = w
      }
    } else {
      sp--
      post[v] = count
      order[count++] = v
    }
  }
  // Predecessors (strong edges only, reachable nodes only).
  const predCount = new Int32Array(n + 1)
  for (let v = 0; v < n; v++) {
    if (post[v] === -1) continue
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (!weak[e] && post[targets[e]!] !== -1) predCount[targets[e]! + 1]!++
  }
  for (let i = 0; i < n; i++) predCount[i + 1]! += predCount[i]!
  const preds = new Int32Array(predCount[n]!)
  const fill = predCount.slice(0, n)
  for (let v = 0; v < n; v++) {
    if (post[v] === -1) continue
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (!weak[e] && post[targets[e]!] !== -1) preds[fill[targets[e]!]!++] = v
  }
  const idom = new Int32Array(n).fill(-1)
  idom[0] = 0
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (post[a]! < post[b]!) a = idom[a]!
      while (post[b]! < post[a]!) b = idom[b]!
    }
    return a
  }
  for (let changed = true; changed; ) {
    changed = false
    for (let i = count - 1; i >= 0; i--) {
      const v = order[i]!
      if (v === 0) continue
      let d = -1
      for (let p = predCount[v]!; p < predCount[v + 1]!; p++) {
        const u = preds[p]!
        if (idom[u] === -1) continue
        d = d === -1 ? u : intersect(u, d)
      }
      if (d !== -1 && idom[v] !== d) {
        idom[v] = d
        changed = true
      }
    }
  }
  return { idom, order: order.slice(0, count) }
}

export function readHeapSnapshot(path: string): HeapSummary {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as Raw
  const nf = raw.snapshot.meta.node_fields
  const ef = raw.snapshot.meta.edge_fields
  const nodeTypes = raw.snapshot.meta.node_types[0]
  const edgeTypes = raw.snapshot.meta.edge_types[0]
  const [iType, iName, iSelf, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [number, number, number, number]
  const [eType, eTo] = ['type', 'to_node'].map((f) => ef.indexOf(f)) as [number, number]
  const weakType = edgeTypes.indexOf('weak')
  const n = raw.nodes.length / nf.length
  const firstEdge = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) firstEdge[i + 1] = firstEdge[i]! + raw.nodes[i * nf.length + iEdges]!
  const m = raw.edges.length / ef.length
  const targets = new Int32Array(m)
  const weak = new Uint8Array(m)
  for (let e = 0; e < m; e++) {
    targets[e] = raw.edges[e * ef.length + eTo]! / nf.length
    weak[e] = raw.edges[e * ef.length + eType] === weakType ? 1 : 0
  }
  const self = new Float64Array(n)
  for (let i = 0; i < n; i++) self[i] = raw.nodes[i * nf.length + iSelf]!
  const { idom, order } = dominators(n, firstEdge, targets, weak)
  // Post order: every node comes after everything it dominates, so one pass adds each retained size to its dominator.
  const retained = Float64Array.from(self)
  for (const v of order) if (v !== 0) retained[idom[v]!]! += retained[v]!
  // Per node its group; per group the totals.
  const groupOf = new Int32Array(n)
  const groupIds = new Map<string, number>()
  const costs: ClassCost[] = []
  let totalBytes = 0
  for (const v of order) {
    const name = groupName(nodeTypes[raw.nodes[v * nf.length + iType]!]!, raw.strings[raw.nodes[v * nf.length + iName]!]!)
    let id = groupIds.get(name)
    if (id === undefined) {
      id = costs.length
      groupIds.set(name, id)
      costs.push({ name, count: 0, selfBytes: 0, retainedBytes: 0 })
    }
    groupOf[v] = id
    costs[id]!.count++
    costs[id]!.selfBytes += self[v]!
    totalBytes += self[v]!
  }
  // A group's retained size counts its outermost instances only (none dominated by another of the same group): a
  // walk of the dominator tree that knows which groups are open above the current node.
  const childStart = new Int32Array(n + 1)
  for (const v of order) if (v !== 0) childStart[idom[v]! + 1]!++
  for (let i = 0; i < n; i++) childStart[i + 1]! += childStart[i]!
  const children = new Int32Array(childStart[n]!)
  const fill = childStart.slice(0, n)
  for (const v of order) if (v !== 0) children[fill[idom[v]!]!++] = v
  const open = new Int32Array(costs.length)
  const stack: number[] = [0]
  const next = new Int32Array(n)
  next[0] = childStart[0]!
  if (open[groupOf[0]!]!++ === 0) costs[groupOf[0]!]!.retainedBytes += retained[0]!
  while (stack.length > 0) {
    const v = stack[stack.length - 1]!
    if (next[v]! < childStart[v + 1]!) {
      const w = children[next[v]!++]!
      next[w] = childStart[w]!
      if (open[groupOf[w]!]!++ === 0) costs[groupOf[w]!]!.retainedBytes += retained[w]!
      stack.push(w)
    } else {
      stack.pop()
      open[groupOf[v]!]!--
    }
  }
  const classes = new Map(costs.map((c) => [c.name, c]))
  return { totalBytes, nodes: order.length, classes }
}

export type ClassGrowth = { name: string; count: number; selfBytes: number; retainedBytes: number }

/** What grew between two snapshots, per constructor, divided by `per` (the sessions added between them). */
export function heapGrowth(before: HeapSummary, after: HeapSummary, per: number): { totalBytes: number; classes: ClassGrowth[] } {
  const names = new Set([...before.classes.keys(), ...after.classes.keys()])
  const classes: ClassGrowth[] = []
  for (const name of names) {
    const a = before.classes.get(name)
    const b = after.classes.get(name)
    classes.push({
      name,
      count: ((b?.count ?? 0) - (a?.count ?? 0)) / per,
      selfBytes: ((b?.selfBytes ?? 0) - (a?.selfBytes ?? 0)) / per,
      retainedBytes: ((b?.retainedBytes ?? 0) - (a?.retainedBytes ?? 0)) / per,
    })
  }
  return { totalBytes: (after.totalBytes - before.totalBytes) / per, classes }
}

export function formatGrowth(g: ReturnType<typeof heapGrowth>, top = 25): string {
  const kib = (b: number) => `${(b / 1024).toFixed(2)} KiB`
  const row = (c: ClassGrowth) =>
    `  ${kib(c.selfBytes).padStart(11)} self ${kib(c.retainedBytes).padStart(11)} retained ${c.count.toFixed(1).padStart(7)} objects  ${c.name}`
  return [
    `heap growth per added session: ${kib(g.totalBytes)} (live objects after a full GC)`,
    'by self size:',
    ...[...g.classes]
      .sort((a, b) => b.selfBytes - a.selfBytes)
      .slice(0, top)
      .map(row),
    'by retained size (outermost instances):',
    ...[...g.classes]
      .sort((a, b) => b.retainedBytes - a.retainedBytes)
      .slice(0, top)
      .map(row),
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [before, after, per] = process.argv.slice(2)
  if (!before || !after) throw new Error('usage: tsx test/bench/heap-snapshot.ts before.heapsnapshot after.heapsnapshot [sessions added]')
  console.log(formatGrowth(heapGrowth(readHeapSnapshot(before), readHeapSnapshot(after), Number(per ?? 1))))
}
