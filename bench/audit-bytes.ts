/**
 * Bytes per audit entry: fills a fresh vault through the REST service with a
 * typical mix (tokens created and read by an application, a few log reads),
 * folds the entity index, then reports the on-disk size of the audit log's
 * tables and indexes (SQLite's dbstat, after a checkpoint and VACUUM) per entry,
 * and what an export (the archive format) of the same entries takes.
 *
 *   node bin/run-ts.cjs bench/audit-bytes.ts [TOKENS]
 */
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { finished } from 'node:stream/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex from 'knex'
import { generateMasterKey, type MasterKey } from '../src/main/bootstrap/master-key'
import { withOfflineVault } from '../src/main/bootstrap/offline-vault'
import { startServiceHost } from '../src/main/bootstrap/service-host'
import { DATABASE_FILE, initVault } from '../src/main/bootstrap/vault'
import { silentLogger } from '../src/main/infra/logger'

const TOKENS = Number(process.argv[2] ?? 5000)
const LOG_OBJECTS = ['logs', 'log_entities', 'log_chain', 'log_entity_index']

async function fill(dataDir: string): Promise<MasterKey> {
  const masterKey = generateMasterKey()
  const { application } = await initVault({ dataDir, masterKey, tenantName: 'Bench' })
  const host = await startServiceHost({ dataDir, masterKey, host: '127.0.0.1', port: 0, logger: silentLogger(), jobTickMs: 0 })
  const call = async (method: string, path: string, key: string, body?: unknown): Promise<{ id: string; key: string }> => {
    const response = await fetch(host.url + path, { method, headers: { 'svc-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return (await response.json()) as { id: string; key: string }
  }
  const app = await call('POST', '/applications', application.key, { name: 'Checkout', type: 'private', permissions: ['token:create', 'token:read'] })
  for (let start = 0; start < TOKENS; start += 200) {
    const ids = await Promise.all(
      Array.from({ length: Math.min(200, TOKENS - start) }, async (_, i) => (await call('POST', '/tokens', app.key, { type: 'card', data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 }, metadata: { n: String(start + i) } })).id)
    )
    await Promise.all(ids.map((id) => call('GET', `/tokens/${id}`, app.key)))
    await call('GET', '/logs?size=20', application.key)
  }
  await host.vault.services.jobs.runDueJobs()
  await host.stop()
  return masterKey
}

async function exportBytes(dataDir: string, masterKey: MasterKey): Promise<{ bytes: number; entries: number }> {
  const file = join(dataDir, 'export.jsonl')
  const out = createWriteStream(file)
  const { entries } = await withOfflineVault({ dataDir }, masterKey, (vault) => vault.exportAuditLog(out, { now: Date.now() }))
  out.end()
  await finished(out)
  return { bytes: (await stat(file)).size, entries }
}

async function measure(dataDir: string): Promise<void> {
  const db = knex({ client: 'sqlite3', connection: { filename: join(dataDir, DATABASE_FILE) }, useNullAsDefault: true })
  try {
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)')
    await db.raw('VACUUM')
    const [{ n }] = await db('logs').count({ n: '*' })
    const entries = Number(n)
    const objects: { name: string; tbl: string; bytes: number; payload: number }[] = await db.raw(
      `SELECT s.name AS name, m.tbl_name AS tbl, sum(s.pgsize) AS bytes, sum(s.payload) AS payload
       FROM dbstat s JOIN sqlite_master m ON m.name = s.name GROUP BY s.name ORDER BY bytes DESC`
    )
    const logObjects = objects.filter((object) => LOG_OBJECTS.includes(object.tbl))
    const total = logObjects.reduce((sum, object) => sum + Number(object.bytes), 0)
    // A catalogued message is stored as its one-byte code, any other as text: the bytes each takes in its row.
    const messages: { avg: number }[] = await db.raw('SELECT avg(length(CAST(message AS BLOB))) AS avg FROM logs')
    console.log(`${entries} audit entries`)
    for (const object of logObjects) console.log(`  ${object.name.padEnd(40)} ${(Number(object.bytes) / entries).toFixed(1).padStart(7)} B/entry (payload ${(Number(object.payload) / entries).toFixed(1)})`)
    console.log(`  ${'audit log, all'.padEnd(40)} ${(total / entries).toFixed(1).padStart(7)} B/entry`)
    console.log(`  average message as stored: ${Number(messages[0].avg).toFixed(1)} bytes`)
  } finally {
    await db.destroy()
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tessera-audit-bytes-'))
  try {
    const masterKey = await fill(dataDir)
    await measure(dataDir)
    const exported = await exportBytes(dataDir, masterKey)
    console.log(`  export (archive format): ${(exported.bytes / exported.entries).toFixed(1)} B/entry`)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

void main()
