/**
 * The v2 lists and search order tokens of one millisecond by id in code point order (UTF-8's byte order), on
 * both engines and whatever a PostgreSQL database's collation: SQLite compares text byte by byte, and the team
 * vault's token id columns are `COLLATE "C"` (migration 20261230000000). Before, a database created with another
 * collation (ICU en-US here) ordered `a`, `B`, `é`, `ß`, `ss`, `~`, … as its locale does, and its pages with it.
 * Each walk a v2 page can take is followed here, page by page: the tokens by time and by type, a metadata value's
 * index, a search index value's, a fingerprint's tokens, and the few tokens an access rule allows. (The pages of
 * such a database did agree with its one-page list, each token once: a cursor is compared in SQL, under the same
 * collation as the order, never in JavaScript. Only the order differed from SQLite's.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { silentLogger } from '../../../src/main/infra/logger'
import { startServiceHost } from '../../../src/main/bootstrap/service-host'
import { initVault } from '../../../src/main/bootstrap/vault'
import { TestClock } from '../../helpers/clock'
import { onPostgres, withDatabase } from '../../helpers/postgres'
import { startTestService } from '../../helpers/service'

/** Ids (of at least 3 characters) that a collation other than byte order sorts otherwise: case, accents, ß against ss, punctuation, a character beyond the BMP. */
const IDS = ['a', 'B', 'é', 'ß', 'ss', '~', 'a-b', 'a_b', '😀', 'A', 'b', 'Z', 'z', '_', '-', 'ä', 'ｚ'].map((suffix) => `tok${suffix}`)
/** Code point order, as UTF-8's bytes compare (JavaScript's `<` compares UTF-16 units, which puts 😀 before ｚ). */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
const NEWEST_FIRST = [...IDS].sort(byCodePoint).reverse()
/**
 * Older tokens of the tenant, in their type's default container: the ordered ones are then few enough for a
 * caller whose rule allows only their container to walk them alone, even a page of 2 (`readsFewer`: 17² ≤ 3 × 117).
 */
const OTHERS = 100
const DATA = 'same value'

interface Service {
  request(method: string, path: string, options: { key?: string; body?: unknown }): Promise<{ status: number; body: any }>
  clock: TestClock
  stop(): Promise<void>
}

const rule = (container: string, permissions: string[]) => ({ priority: 1, container, transform: 'reveal', permissions })

/** The cases below on `start()`'s service. */
function ordersByCodePoint(start: () => Promise<Service>): void {
  let service: Service
  let reader: string
  let ruleBound: string
  let fingerprint: string

  beforeAll(async () => {
    service = await start()
    const app = async (rules: unknown[]) => {
      const response = await service.request('POST', '/applications', { body: { name: `app ${rules.length}`, type: 'private', rules } })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      return response.body.key as string
    }
    reader = await app([rule('/', ['token:create', 'token:read', 'token:search'])])
    ruleBound = await app([rule('/ordered/', ['token:read', 'token:search'])])
    const others = await service.request('POST', '/tokenize', { key: reader, body: Array.from({ length: OTHERS }, (_, i) => `other ${i}`) })
    expect(others.status, JSON.stringify(others.body)).toBe(200)
    service.clock.advance(1)
    // One request, so one millisecond: the ids alone order them.
    const body = IDS.map((id) => ({ type: 'token', id, data: DATA, containers: ['/ordered/'], metadata: { batch: 'ordered' }, search_indexes: ['{{ data }}'] }))
    const created = await service.request('POST', '/tokenize', { key: reader, body })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(new Set(created.body.map((token: { created_at: string }) => token.created_at)).size).toBe(1)
    fingerprint = created.body[0].fingerprint
  })
  afterAll(() => service?.stop())

  /** Every page of a v2 list or search of `size`, following `next` to the end: the ids, each page's in order. */
  async function pages(route: (start: string | undefined) => Promise<{ status: number; body: any }>): Promise<string[][]> {
    const all: string[][] = []
    let start: string | undefined
    do {
      const response = await route(start)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      all.push(response.body.data.map((token: { id: string }) => token.id))
      start = response.body.pagination.next
      expect(all.length).toBeLessThan(100)
    } while (start !== undefined)
    return all
  }

  const list = (query: string, size: number, key = reader) => (start?: string) =>
    service.request('GET', `/v2/tokens?${query}&size=${size}${start === undefined ? '' : `&start=${encodeURIComponent(start)}`}`, { key })
  const search = (query: string, size: number, key = reader) => (start?: string) => service.request('POST', '/v2/tokens/search', { key, body: { query, size, start } })

  /** The ordered tokens a walk finds, in one page and in pages of 2 and of 3: newest first, those of one millisecond by id in code point order, each once. */
  async function expectCodePointOrder(walk: (size: number) => (start?: string) => Promise<{ status: number; body: any }>, othersFollow = false) {
    for (const size of [100, 3, 2]) {
      const found = (await pages(walk(size))).flat()
      expect(found.slice(0, IDS.length), `pages of ${size}`).toEqual(NEWEST_FIRST)
      expect(new Set(found).size, `pages of ${size}`).toBe(found.length)
      expect(found.length).toBe(IDS.length + (othersFollow ? OTHERS : 0))
    }
  }

  it('GET /v2/tokens: the tenant tokens by time', () => expectCodePointOrder((size) => list('', size), true))
  it('GET /v2/tokens?type=token: the tokens of a type', () => expectCodePointOrder((size) => list('type=token', size), true))
  it('GET /v2/tokens?container=…: the tokens by time, those of the container kept', () => expectCodePointOrder((size) => list('container=/ordered/', size)))
  it('GET /v2/tokens?metadata.batch=…: a metadata value’s index', () => expectCodePointOrder((size) => list('metadata.batch=ordered', size)))
  it('GET /v2/tokens?fingerprint=…: a fingerprint’s tokens', () => expectCodePointOrder((size) => list(`fingerprint=${fingerprint}`, size)))
  it('GET /v2/tokens for a caller whose rule allows one container: the tokens it allows alone', () => expectCodePointOrder((size) => list('', size, ruleBound)))
  it('POST /v2/tokens/search data:…: a search index value’s entries', () => expectCodePointOrder((size) => search(`data:"${DATA}"`, size)))
  it('POST /v2/tokens/search container:…', () => expectCodePointOrder((size) => search('container:/ordered/', size)))
  it('POST /v2/tokens/search metadata.batch:… for the rule-bound caller', () => expectCodePointOrder((size) => search('metadata.batch:ordered', size, ruleBound)))
}

describe('tokens of one millisecond come in code point order of their ids (this engine)', () => {
  ordersByCodePoint(startTestService)
})

const ADMIN_URL = process.env.TESSERA_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Why the ICU case cannot run here, if it cannot: it needs PostgreSQL 15 or later (a database's ICU locale) built with ICU. */
async function icuUnavailable(): Promise<string | undefined> {
  if (!onPostgres) return 'it runs in the api-postgres project'
  return withDatabase(ADMIN_URL, async (db) => {
    const { rows } = await db.raw(`select current_setting('server_version_num')::int as version, exists (select 1 from pg_collation where collprovider = 'i') as icu`)
    if (rows[0].version < 150000) return `PostgreSQL ${rows[0].version} cannot give a database an ICU locale (15 or later can)`
    if (!rows[0].icu) return 'this PostgreSQL is built without ICU'
    return undefined
  })
}

const skipped = await icuUnavailable()

/** A test service (as helpers/service.ts starts one) over a new database whose default collation is ICU's en-US. */
async function startOnIcuDatabase(): Promise<Service> {
  const name = `tessera_test_icu_${process.pid}_${Date.now().toString(36)}`
  await withDatabase(ADMIN_URL, (db) => db.raw(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`))
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  await withDatabase(databaseUrl, async (db) => {
    // The case this test is for: the database's own order is not byte order.
    const { rows } = await db.raw(`select array_agg(x order by x) as sorted from unnest(array['a', 'B']) x`)
    expect(rows[0].sorted).toEqual(['a', 'B'])
  })
  const dataDir = await mkdtemp(join(tmpdir(), 'tessera-test-icu-'))
  const masterKey = generateMasterKey()
  const clock = new TestClock()
  const init = await initVault({ dataDir, databaseUrl, masterKey, tenantName: 'Test tenant', ownerEmail: 'owner@example.com', clock })
  const host = await startServiceHost({ dataDir, databaseUrl, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), clock, jobTickMs: 0 })
  return {
    clock,
    async request(method, path, { key = init.application.key, body }) {
      const response = await fetch(host.url + path, { method, headers: { 'svc-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: response.status, body: await response.json() }
    },
    async stop() {
      await host.stop()
      await rm(dataDir, { recursive: true, force: true })
      await withDatabase(ADMIN_URL, (db) => db.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }
}

describe.skipIf(skipped !== undefined)(`… on a PostgreSQL database whose collation is ICU's en-US${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  ordersByCodePoint(startOnIcuDatabase)
})
