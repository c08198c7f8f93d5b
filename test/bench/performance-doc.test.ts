// docs/PERFORMANCE.md as the bench writes it, from fixed inputs: the "Before" column (the compared commit's value for
// the inbound figures, else the replaced file's value for the same metric text, else "—"), the issue-23 "Done when"
// table and the hand-written history carried over.
import { describe, expect, it } from 'vitest'
import { beforeFromDoc, beforeFromRun, recordedFigures } from './before-after'
import type { Baseline, BenchReport } from './bench-kit'
import { doneWhenRows } from './done-when'
import { performanceDoc } from './performance-doc'

const baseline = (usageP50Ms: number, usageCpuMs: number): Baseline => ({ usageP50Ms, usageP99Ms: 9, samples: 300, proxiedUsageP50Ms: 10, usageCpuMs })

const PREVIOUS = `# Performance

- Command: \`npm run bench\`
- Date: 2026-11-22T03:49:12.722Z

## Speed targets

| Goal | This run | Compared commit | Target | Met |
|---|---|---|---|---|
| MCP overhead ratio (p50 tools/call ÷ p50 direct) | 9.99x | — | x | — |

## MCP overhead (issue #4)

| Metric | Value | Target | Met |
|---|---|---|---|
| MCP overhead ratio (p50 tools/call ÷ p50 direct) | 1.20x | ≤ 1.5x | yes |
| tools/list p50 (100 calls) | 5.14 ms |  |  |

## Cost at rest

| Metric | Before | Now | Target | Met |
|---|---|---|---|---|
| account wake-ups per idle hour | 1 | 0 | 0 | yes |

## Relay bridge: alpha and beta side by side

| Metric | alpha | beta | Target | Met |
|---|---|---|---|---|
| MCP overhead ratio (p50 tools/call ÷ p50 direct) | 7x | 8x | | |
`

const inbound = (p50: string, rate: number, lostDup = '0 / 0'): BenchReport => ({
  title: 'Inbound: wake latency and ingest (issue #2)',
  rows: [
    { metric: 'push sent → wait returned p50 (500 messages)', value: p50, target: '≤ 2x baseline', ok: Number.parseFloat(p50) <= 12 },
    { metric: 'ingest throughput (16 clients, 3000 messages, consumer draining)', value: `${rate} msg/s`, target: '≥ 500 msg/s', ok: rate >= 500 },
    { metric: 'lost / duplicated (received by the consumer)', value: lostDup, target: '0 / 0', ok: lostDup === '0 / 0' },
  ],
})

const mcp: BenchReport = {
  title: 'MCP overhead (issue #4)',
  rows: [
    { metric: 'MCP overhead ratio (p50 tools/call ÷ p50 direct)', value: '1.08x', target: '≤ 1.5x', ok: true },
    { metric: 'official SDK client callTool(get_usage) p50 / p99 (300 calls)', value: '8.20 ms / 18.74 ms' },
  ],
}

describe('recordedFigures', () => {
  it('reads the date and each metric’s value from tables headed Metric, taking the Value or Now column and the first table that lists it', () => {
    const rec = recordedFigures(PREVIOUS)
    expect(rec.date).toBe('2026-11-22')
    expect(rec.values.get('MCP overhead ratio (p50 tools/call ÷ p50 direct)')).toBe('1.20x')
    expect(rec.values.get('tools/list p50 (100 calls)')).toBe('5.14 ms')
    expect(rec.values.get('account wake-ups per idle hour')).toBe('0')
    expect(rec.values.has('---')).toBe(false)
  })

  it('skips tables without a value column and the Done-when table', () => {
    const rec = recordedFigures(PREVIOUS.replace(/## MCP overhead[\s\S]*?## Cost/, '## Cost'))
    expect(rec.values.has('MCP overhead ratio (p50 tools/call ÷ p50 direct)')).toBe(false)
  })
})

describe('the Before column', () => {
  it('matches a row by its exact metric text and says — when the replaced file has none', () => {
    const before = beforeFromDoc(recordedFigures(PREVIOUS))
    expect(before.label).toBe('Before (PERFORMANCE.md of 2026-11-22)')
    expect(before.value(mcp.rows[0]!)).toBe('1.20x')
    expect(before.value(mcp.rows[1]!)).toBeUndefined()
  })

  it('takes the compared commit’s value from the same run', () => {
    const before = beforeFromRun('58e5f7d', inbound('11.30 ms', 356))
    expect(before.label).toBe('Before (58e5f7d, same run, back to back)')
    expect(before.value(inbound('12.74 ms', 193).rows[1]!)).toBe('356 msg/s')
  })
})

describe('doneWhenRows', () => {
  const run = { baseline: baseline(6, 4.8), reports: [inbound('12.74 ms', 193), mcp] }
  const compared = { sha: '58e5f7d', baseline: baseline(2.8, 2.67), reports: [inbound('11.30 ms', 356)] }

  it('puts this run’s figure beside the compared commit’s and judges the GET CPU against 1.1x of it', () => {
    const [cpu, wake, ingest] = doneWhenRows(run, compared)
    expect(cpu).toEqual({
      goal: 'baseline GET /v1/usage server CPU per call',
      now: '4.80 ms',
      compared: '2.67 ms',
      target: '≤ 1.1x 58e5f7d’s',
      met: false,
    })
    expect(wake).toMatchObject({ now: '12.74 ms', compared: '11.30 ms', met: false })
    expect(ingest).toMatchObject({ now: '193 msg/s; 0 / 0', compared: '356 msg/s; 0 / 0', target: '≥ 500 msg/s with 0 / 0', met: false })
  })

  it('meets the GET CPU goal at exactly 1.1x and not above', () => {
    const at = (cpu: number) => doneWhenRows({ ...run, baseline: baseline(6, cpu) }, compared)[0]!.met
    expect(at(2.67 * 1.1)).toBe(true)
    expect(at(2.67 * 1.1 + 0.01)).toBe(false)
  })

  it('judges the GET CPU from the alternating rounds when they were measured, pair by pair, over the two baselines', () => {
    const cpu = { sets: 3, rounds: 24, callsPerRound: 150, mineMs: 2.9, theirsMs: 2.7, ratio: 1.08 }
    const [row] = doneWhenRows(run, { ...compared, cpu })
    expect(row).toEqual({
      goal: 'baseline GET /v1/usage server CPU per call (both servers up, 24 alternating rounds of 150 calls over 3 fresh pairs; median round, and median ratio of a pair of rounds)',
      now: '2.90 ms (1.08x, pair by pair)',
      compared: '2.70 ms',
      target: '≤ 1.1x 58e5f7d’s',
      met: true,
    })
    // The pairs' ratio decides, not the two medians: medians within 1.1x with pairs above it miss.
    expect(doneWhenRows(run, { ...compared, cpu: { ...cpu, mineMs: 2.7, ratio: 1.12 } })[0]!.met).toBe(false)
    expect(doneWhenRows(run, { ...compared, cpu: { ...cpu, mineMs: 3.2, ratio: 1.1 } })[0]!.met).toBe(true)
  })

  it('judges MCP overhead against today’s 1.11x and leaves goals of benches that did not run as not measured', () => {
    const rows = doneWhenRows(run)
    expect(rows.find((r) => r.goal.startsWith('MCP overhead'))).toMatchObject({ now: '1.08x', met: true, compared: '—' })
    expect(doneWhenRows({ ...run, reports: [{ ...mcp, rows: [{ ...mcp.rows[0]!, value: '1.12x' }] }] }).find((r) => r.goal.startsWith('MCP'))?.met).toBe(false)
    expect(rows.find((r) => r.goal === 'relay memory per idle session')).toMatchObject({ now: 'not measured', met: undefined })
    expect(rows[0]).toMatchObject({ compared: '—', met: undefined })
  })

  it('judges push → wait against the baseline and shows the ratio to the GET timed after the same pause beside it', () => {
    const paired = { metric: 'push sent → wait returned p50 ÷ that GET’s p50', value: '1.90x' }
    const report = inbound('12.74 ms', 193)
    const [, wake] = doneWhenRows({ ...run, reports: [{ ...report, rows: [...report.rows, paired] }] })
    expect(wake).toMatchObject({ now: '12.74 ms (1.90x a bare GET after the same pause)', met: false })
  })

  it('fails the ingest goal when a message was lost even at 500 msg/s', () => {
    const ingest = doneWhenRows({ ...run, reports: [inbound('10 ms', 600, '1 / 0')] })[2]
    expect(ingest).toMatchObject({ now: '600 msg/s; 1 / 0', met: false })
  })
})

describe('performanceDoc', () => {
  const doc = performanceDoc({
    command: 'npm run bench -- --compare /work/wt/base58',
    date: new Date('2026-11-27T01:00:00Z'),
    machine: '2 × test CPU',
    cores: 2,
    loadAtStart: [0.5, 0.5, 0.5],
    loadAtEnd: [0.6, 0.6, 0.6],
    loaded: false,
    baseline: baseline(6, 4.8),
    reports: [
      { name: 'inbound', report: inbound('12.74 ms', 193) },
      { name: 'mcp', report: mcp },
    ],
    compared: { sha: '58e5f7d', dir: '/work/wt/base58', baseline: baseline(2.8, 2.67), reports: [{ name: 'inbound', report: inbound('11.30 ms', 356) }] },
    previous: PREVIOUS,
    history: '# Performance history\n\nIntro.\n\n## Round one\n\nGET 6.07 ms.\n',
  })

  it('labels the inbound table’s Before with the compared commit and the others’ with the replaced file’s date', () => {
    expect(doc).toContain('| Metric | Value | Before (58e5f7d, same run, back to back) | Baseline (same run) | Ratio | Target | Met |')
    expect(doc).toContain('| ingest throughput (16 clients, 3000 messages, consumer draining) | 193 msg/s | 356 msg/s |')
    expect(doc).toContain('| Metric | Value | Before (PERFORMANCE.md of 2026-11-22) | Baseline (same run) | Ratio | Target | Met |')
    expect(doc).toContain('| MCP overhead ratio (p50 tools/call ÷ p50 direct) | 1.08x | 1.20x |')
    expect(doc).toContain('| official SDK client callTool(get_usage) p50 / p99 (300 calls) | 8.20 ms / 18.74 ms | — |')
  })

  it('opens with the Done-when table and the compared commit’s baseline', () => {
    expect(doc).toContain('| Goal | This run | 58e5f7d (same run, back to back) | Target | Met |')
    expect(doc).toContain('| baseline GET /v1/usage server CPU per call | 4.80 ms | 2.67 ms | ≤ 1.1x 58e5f7d’s | NOT met |')
    expect(doc).toContain('- Compared commit: 58e5f7d (checkout /work/wt/base58)')
    expect(doc.indexOf('## Speed targets')).toBeLessThan(doc.indexOf('## Inbound'))
  })

  it('names no private issue numbers or spec sections (the docs-links test forbids them in docs/)', () => {
    expect(doc).not.toMatch(/\bissue \d+|§\s?\d/i)
  })

  it('ends with the history file, its title dropped and its headings one level down', () => {
    expect(doc).toMatch(
      /## Earlier rounds\n\nCarried over verbatim from \[performance-history\.md\]\(performance-history\.md\)[^\n]*\n\nIntro\.\n\n### Round one\n\nGET 6\.07 ms\.\n$/
    )
  })
})
