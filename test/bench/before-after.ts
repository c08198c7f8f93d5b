/**
 * The "Before" column of docs/PERFORMANCE.md (issue 23: "before/after per figure"). A figure's before is the compared
 * commit's value from the same run (`npm run bench -- --compare <dir>`, inbound figures), else the value recorded for
 * the same metric in the docs/PERFORMANCE.md being replaced, else "—". Rows are matched by their metric text, so a
 * figure whose wording changed starts a new history rather than being compared with a different measurement.
 */
import type { BenchReport, BenchRow } from './bench-kit'

/** Figures of a docs/PERFORMANCE.md: its run's date and each metric's value (the first table that lists it wins). */
export type RecordedFigures = { date: string | undefined; values: Map<string, string> }

/** Where a table's before values come from, and the column's label. */
export type BeforeSource = { label: string; value(row: BenchRow): string | undefined }

/** Columns that hold a figure's value in the tables this file has carried (generated ones say Value). */
const VALUE_COLUMNS = ['Value', 'Now']

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) => c.trim())

/** Reads the figures out of a PERFORMANCE.md's tables whose head starts with "Metric" and has a value column. */
export function recordedFigures(markdown: string): RecordedFigures {
  const values = new Map<string, string>()
  const date = /^- Date: (\d{4}-\d{2}-\d{2})/m.exec(markdown)?.[1]
  let valueAt = -1
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      valueAt = -1
      continue
    }
    const row = cells(line)
    if (row[0] === 'Metric') {
      valueAt = row.findIndex((c) => VALUE_COLUMNS.includes(c))
      continue
    }
    if (valueAt < 1 || /^-+$/.test(row[0] ?? '')) continue
    const [metric, value] = [row[0]!, row[valueAt]]
    if (value && !values.has(metric)) values.set(metric, value)
  }
  return { date, values }
}

export function beforeFromDoc(recorded: RecordedFigures): BeforeSource {
  return { label: `Before (PERFORMANCE.md of ${recorded.date ?? 'unknown date'})`, value: (row) => recorded.values.get(row.metric) }
}

/** The compared commit's report of the same bench, measured in this run right after this tree's. */
export function beforeFromRun(sha: string, report: BenchReport): BeforeSource {
  const byMetric = new Map(report.rows.map((r) => [r.metric, r.value]))
  return { label: `Before (${sha}, same run, back to back)`, value: (row) => byMetric.get(row.metric) }
}

export const beforeText = (row: BenchRow, before: BeforeSource | undefined) => before?.value(row) ?? '—'
