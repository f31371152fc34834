import Papa from 'papaparse'
import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import { CARD_NUMBER_DIGITS, TOKENIZE_MAX_TOKENS, tokenDataErrors, type TokenTypeName } from '@shared/token-rules'
import type { Token } from '@shared/types'
import { api, ProblemError } from '@renderer/api'
import { downloadCsv } from '@renderer/composables/csv'
import { useAction } from '@renderer/composables/useAction'

/** The token types a single cell can hold (a bank account needs two). */
type CellType = Extract<TokenTypeName, 'token' | 'card'>

/** What happens to a column: copied to the output, dropped, or tokenized as a type. */
export type ColumnRole = 'keep' | 'skip' | CellType

export interface ColumnMapping {
  name: string
  role: ColumnRole
}

export type Row = Record<string, unknown>

/** Rows per `tokenize.run` call at most: small enough to keep progress moving and each request well under the body limit. */
export const CHUNK_ROWS = 500

/** Rows sent in one `tokenize.run` call: where they start in the file, the request of each, and the tokens they ask for. */
interface Chunk {
  start: number
  rows: Row[]
  requests: Row[]
  tokens: number
}

const CARD_COLUMN = /card|pan|cc_?num|credit/i
/** Shaped like a card number, whether or not its check digit is right (a wrong one is named when the run starts). */
const CARD_NUMBER_SHAPE = new RegExp(`^\\d{${CARD_NUMBER_DIGITS.min},${CARD_NUMBER_DIGITS.max}}$`)

const withoutSeparators = (value: unknown) => String(value).replace(/[\s-]/g, '')

function guessRole(name: string, rows: Row[]): ColumnRole {
  const sample = rows.slice(0, 20).map((row) => withoutSeparators(row[name] ?? '')).filter(Boolean)
  if (CARD_COLUMN.test(name) && sample.length > 0 && sample.every((value) => CARD_NUMBER_SHAPE.test(value))) return 'card'
  return 'token'
}

/** The token request for one cell; card numbers lose their separators. */
function tokenRequest(type: CellType, value: unknown): { type: CellType; data: unknown } {
  if (type === 'card') return { type, data: { number: withoutSeparators(value) } }
  return { type, data: value }
}

/** Names that, as keys of a row or request object, would reach its prototype instead of holding a value. */
const RESERVED_COLUMNS = ['__proto__', 'constructor', 'prototype']

/** Why the columns cannot be loaded, if one of them has a reserved name. */
function reservedColumnError(names: string[]): string | undefined {
  const reserved = names.find((name) => RESERVED_COLUMNS.includes(name))
  if (reserved === undefined) return undefined
  return `The column "${reserved}" cannot be used: __proto__, constructor and prototype are reserved names. Rename it and load it again.`
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === ''
}

/** Field errors of a failed chunk point at rows of the whole file, 1-based (`[3].card` → `row 1504 › card`). */
function describeChunkError(error: unknown, firstRow: number): string {
  if (!(error instanceof ProblemError)) return 'The chunk could not be tokenized.'
  const fields = Object.entries(error.problem.errors ?? {}).map(([path, messages]) => {
    const located = path.replace(/^\[(\d+)\]\.?/, (_match, index: string) => `row ${firstRow + Number(index) + 1} › `)
    return `${located.replace(/ › $/, '')}: ${messages.join('; ')}`
  })
  return [error.problem.detail, ...fields.slice(0, 5)].join(' ')
}

/** Every card cell that breaks a card rule, located as the service would (`row 2 › card_number.data.number: fails the Luhn check`). */
function invalidCards(rows: Row[], columns: ColumnMapping[]): string[] {
  const cardColumns = columns.filter((column) => column.role === 'card')
  return rows.flatMap((row, index) =>
    cardColumns.flatMap((column) => {
      if (isEmpty(row[column.name])) return []
      const errors = tokenDataErrors('card', tokenRequest('card', row[column.name]).data, `${column.name}.data`)
      return Object.entries(errors).map(([path, messages]) => `row ${index + 1} › ${path}: ${messages.join('; ')}`)
    })
  )
}

/**
 * Bulk tokenization: load rows from a CSV file or pasted JSON, map columns to
 * token types, then tokenize in chunks with progress and cancel. Only ids
 * (and the columns kept as they are) end up in the result.
 */
export const useTokenizeStore = defineStore('tokenize', () => {
  const sourceName = ref('')
  /** Parsed input; shallow, as 10,000 rows need no deep reactivity. */
  const rows = shallowRef<Row[]>([])
  const columns = ref<ColumnMapping[]>([])
  const loadError = ref('')
  const status = ref<'idle' | 'running' | 'cancelled' | 'done' | 'failed'>('idle')
  const processed = ref(0)
  const tokensCreated = ref(0)
  const results = shallowRef<Row[]>([])
  const runError = ref('')
  const startedAt = ref(0)
  const finishedAt = ref(0)
  let cancelRequested = false
  const { run: runChunk } = useAction()

  const tokenized = computed(() => columns.value.filter((c) => c.role === 'token' || c.role === 'card'))
  const outputColumns = computed(() => columns.value.filter((c) => c.role !== 'skip').map((c) => c.name))
  const progress = computed(() => (rows.value.length ? Math.round((processed.value / rows.value.length) * 100) : 0))
  const canRun = computed(() => rows.value.length > 0 && tokenized.value.length > 0 && status.value !== 'running')

  /** Takes the rows, unless a column has a reserved name: its values would vanish without a word. */
  function setRows(name: string, parsed: Row[], names: string[]): boolean {
    const refused = reservedColumnError(names)
    if (refused) {
      loadError.value = refused
      return false
    }
    reset()
    sourceName.value = name
    rows.value = parsed
    columns.value = names.map((column) => ({ name: column, role: guessRole(column, parsed) }))
    return true
  }

  /** Parses a CSV with a header row. */
  function loadCsv(text: string, fileName: string): boolean {
    const parsed = Papa.parse<Row>(text, { header: true, skipEmptyLines: 'greedy' })
    const fields = (parsed.meta.fields ?? []).filter(Boolean)
    if (fields.length === 0 || parsed.data.length === 0) {
      loadError.value = 'The file has no header row or no data rows.'
      return false
    }
    // A single-column file has no delimiter to detect; short rows are read as empty cells.
    const serious = parsed.errors.find((e) => e.type !== 'FieldMismatch' && e.type !== 'Delimiter')
    if (serious) {
      loadError.value = `Row ${(serious.row ?? 0) + 1}: ${serious.message}`
      return false
    }
    return setRows(fileName, parsed.data, fields)
  }

  /** Takes a JSON array of objects (columns = their keys) or of plain values (one column). */
  function loadJson(text: string): boolean {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      loadError.value = 'This is not valid JSON.'
      return false
    }
    if (!Array.isArray(value) || value.length === 0) {
      loadError.value = 'Paste a non-empty JSON array: of objects (one column per key) or of values.'
      return false
    }
    if (value.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))) {
      const names = [...new Set(value.slice(0, 1000).flatMap((item) => Object.keys(item as Row)))]
      return setRows('pasted JSON', value as Row[], names)
    }
    return setRows('pasted JSON', value.map((item) => ({ value: item })), ['value'])
  }

  function setRole(name: string, role: ColumnRole): void {
    columns.value = columns.value.map((c) => (c.name === name ? { ...c, role } : c))
  }

  /** The request for one row: only its tokenized, non-empty cells. */
  function requestFor(row: Row): Row {
    const request: Row = {}
    for (const column of tokenized.value) {
      const value = row[column.name]
      if (!isEmpty(value)) request[column.name] = tokenRequest(column.role as CellType, value)
    }
    return request
  }

  function outputFor(row: Row, response: Row): Row {
    const out: Row = {}
    for (const column of columns.value) {
      if (column.role === 'keep') out[column.name] = row[column.name]
      else if (column.role !== 'skip') out[column.name] = (response[column.name] as Token | undefined)?.id ?? ''
    }
    return out
  }

  /** The rows in chunks of at most CHUNK_ROWS rows and TOKENIZE_MAX_TOKENS tokens, the most one request may create. */
  function chunks(): Chunk[] {
    const all: Chunk[] = []
    let chunk: Chunk | undefined
    rows.value.forEach((row, index) => {
      const request = requestFor(row)
      const count = Object.keys(request).length
      if (!chunk || chunk.rows.length === CHUNK_ROWS || chunk.tokens + count > TOKENIZE_MAX_TOKENS) {
        all.push((chunk = { start: index, rows: [], requests: [], tokens: 0 }))
      }
      chunk.rows.push(row)
      chunk.requests.push(request)
      chunk.tokens += count
    })
    return all
  }

  /** Refuses to start when a card cell breaks a card rule: nothing is sent, so no file is tokenized in part for it. */
  function checkCards(): boolean {
    const problems = invalidCards(rows.value, columns.value)
    if (problems.length === 0) return true
    const count = `${problems.length.toLocaleString()} card value${problems.length === 1 ? ' is' : 's are'} not valid`
    runError.value = [`Nothing was tokenized: ${count}.`, ...problems.slice(0, 5)].join(' ')
    status.value = 'failed'
    return false
  }

  /** Tokenizes every row a chunk per call (see `chunks`), yielding to the UI between calls; stops at the first failed chunk. */
  async function run(): Promise<void> {
    if (!canRun.value) return
    cancelRequested = false
    processed.value = 0
    tokensCreated.value = 0
    runError.value = ''
    results.value = []
    startedAt.value = Date.now()
    if (!checkCards()) return
    status.value = 'running'
    const output: Row[] = []
    for (const { start, rows: chunk, requests, tokens } of chunks()) {
      if (cancelRequested) {
        status.value = 'cancelled'
        break
      }
      const sent = await runChunk(
        'Bulk tokenize',
        async () => {
          const responses = (await api().tokenize.run(requests)) as Row[]
          chunk.forEach((row, i) => output.push(outputFor(row, responses[i] ?? {})))
          tokensCreated.value += tokens
          processed.value = start + chunk.length
        },
        { failed: (error) => (runError.value = describeChunkError(error, start)) }
      )
      if (!sent) {
        status.value = 'failed'
        break
      }
      results.value = output.slice()
      // Let the window paint the progress bar and handle input before the next chunk.
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
    if (status.value === 'running') status.value = 'done'
    results.value = output
    finishedAt.value = Date.now()
  }

  /** Stops after the chunk in flight; tokens already created stay created. */
  function cancel(): void {
    cancelRequested = true
  }

  function exportCsv(): void {
    downloadCsv(`${sourceName.value.replace(/\.csv$/i, '') || 'tokenized'}-tokens.csv`, results.value, outputColumns.value)
  }

  function reset(): void {
    sourceName.value = ''
    rows.value = []
    columns.value = []
    loadError.value = ''
    status.value = 'idle'
    processed.value = 0
    tokensCreated.value = 0
    results.value = []
    runError.value = ''
  }

  return {
    sourceName,
    rows,
    columns,
    loadError,
    status,
    processed,
    tokensCreated,
    results,
    runError,
    startedAt,
    finishedAt,
    tokenized,
    outputColumns,
    progress,
    canRun,
    loadCsv,
    loadJson,
    setRole,
    run,
    cancel,
    exportCsv,
    reset
  }
})
