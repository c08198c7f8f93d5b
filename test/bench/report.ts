/**
 * How `npm run bench` reports: each figure beside the same run's baseline, its ratio, its target and whether it was
 * met; and whether the machine was quiet enough for the run to count. A run whose 1-minute load average exceeds
 * the number of cores (2 on the 2-core reference machine) at its start or end is marked loaded: it is printed but
 * not recorded as docs/PERFORMANCE.md (its markdown goes to the temp directory instead).
 */
import { cpus, loadavg } from 'node:os'
import { type BeforeSource, beforeText } from './before-after'
import { ms, type Baseline, type BenchRow } from './bench-kit'

export type Load = [number, number, number]

export const currentLoad = (): Load => loadavg() as Load

/** Loaded: more runnable work than cores, so figures measure the other work as much as ours. */
export function isLoaded(load: Load, cores = cpus().length): boolean {
  return load[0] > cores
}

export const formatLoad = (l: Load) => l.map((v) => v.toFixed(2)).join(' / ')

/** The baseline a row is compared with, as text: the bare GET's round trip p50 or its server CPU per call. */
export function baselineText(row: BenchRow, baseline: Baseline | undefined): string {
  if (!baseline) return '—'
  return row.base === 'cpu' ? `${ms(baseline.usageCpuMs)} CPU/GET` : `${ms(baseline.usageP50Ms)} GET p50`
}

export const ratioText = (row: BenchRow) => (row.ratio === undefined ? '—' : `${row.ratio.toFixed(2)}x`)
export const metText = (row: BenchRow) => (row.ok === undefined ? '—' : row.ok ? 'met' : 'NOT met')

/** One console line per figure. */
export function formatLine(row: BenchRow, baseline: Baseline | undefined): string {
  const mark = row.ok === undefined ? ' ' : row.ok ? '✓' : '✗'
  return `${mark} ${row.metric}: ${row.value} | baseline ${baselineText(row, baseline)} | ratio ${ratioText(row)} | target ${row.target ?? '—'} | ${metText(row)}`
}

/** A figure table's head; its "Before" column is labelled with where the before values come from. */
export function tableHead(before: BeforeSource | undefined): string[] {
  return [`| Metric | Value | ${before?.label ?? 'Before'} | Baseline (same run) | Ratio | Target | Met |`, '|---|---|---|---|---|---|---|']
}

export function tableRow(row: BenchRow, baseline: Baseline | undefined, before?: BeforeSource): string {
  return `| ${row.metric} | ${row.value} | ${beforeText(row, before)} | ${baselineText(row, baseline)} | ${ratioText(row)} | ${row.target ?? '—'} | ${metText(row)} |`
}
