import Papa from 'papaparse'

/** Saves rows as a CSV file through the browser's download (Electron shows a save dialog). */
export function downloadCsv(filename: string, rows: Record<string, unknown>[] | unknown[][], columns?: string[]): void {
  const text = Papa.unparse(rows as never, columns ? { columns } : undefined)
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
