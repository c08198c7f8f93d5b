/**
 * Prometheus text exposition (format 0.0.4) for GET /admin/metrics: metric families with HELP and TYPE lines and
 * escaped label values. A few lines of our own because prom-client, which the relay uses, needs Node's cluster and
 * v8 modules that workerd does not have.
 */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export type Sample = { labels?: Record<string, string>; value: number }
export type Family = { name: string; help: string; type: 'counter' | 'gauge'; samples: Sample[] }

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')

function sampleLine(name: string, s: Sample): string {
  const labels = Object.entries(s.labels ?? {})
  const set = labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
  return `${name}${set} ${Number.isFinite(s.value) ? s.value : 'NaN'}`
}

export function exposition(families: Family[]): string {
  const lines: string[] = []
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) lines.push(sampleLine(f.name, s))
  }
  return `${lines.join('\n')}\n`
}
