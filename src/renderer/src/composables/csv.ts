import Papa from 'papaparse'

/**
 * Cells a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) get a
 * leading `'`, so that a value from outside (a trace id, a token id, a CSV cell) cannot open links
 * or read other cells when the file is opened. Papa's own `escapeFormulae: true` pattern misses
 * values holding a line break.
 */
const FORMULA_START = /^[=+\-@\t\r]/

/** Saves rows as a CSV file through the browser's download (Electron shows a save dialog). */
export function downloadCsv(filename: string, rows: Record<string, unknown>[] | unknown[][], columns?: string[]): void {
  const text = Papa.unparse(rows as never, { columns, escapeFormulae: FORMULA_START })
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }))
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  link.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** A file name with today's date, e.g. `audit-log-2026-11-26.csv`. */
export function datedFilename(stem: string): string {
  return `${stem}-${new Date().toISOString().slice(0, 10)}.csv`
}
