/**
 * Nothing sensitive at rest: the raw SQLite file and its WAL hold
 * no token plaintext and no API key, a deleted token leaves only a tombstone,
 * and a wrong master key cannot open the vault.
 */
import { spawn } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateMasterKey } from '../../../src/main/crypto/keys'
import { silentLogger } from '../../../src/main/infra/logger'
import { openVault } from '../../../src/main/bootstrap/vault'
import { startTestService, type TestService } from '../../helpers/service'
import { withCheckDigit } from '../../helpers/tokens'
import { sql } from '../../../src/main/storage/connections'
import { openVaultFile } from '../../helpers/database'
import { onPostgres } from '../../helpers/postgres'

const CARD_NUMBER = withCheckDigit('491633850608283')
const CVC = '7319'
const ACCOUNT_NUMBER = '98765432101234'
const SECRET_STRING = 'correct horse battery staple 5e1f'
const DELETED_STRING = 'erased beyond recovery 90ab'
const PATCHED_AWAY = 'overwritten by a patch c4d2'

/** The encodings a careless implementation might store a value in. */
function encodings(value: string): Array<[string, Buffer]> {
  return [
    ['utf8', Buffer.from(value, 'utf8')],
    ['utf16le', Buffer.from(value, 'utf16le')],
    ['hex of utf8', Buffer.from(Buffer.from(value, 'utf8').toString('hex'), 'utf8')],
    ['base64 of utf8', Buffer.from(Buffer.from(value, 'utf8').toString('base64'), 'utf8')]
  ]
}

/** Every file in the data dir (database, WAL, shared memory, lock), by name. */
async function readDataDir(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>()
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) files.set(entry.name, await readFile(join(dir, entry.name)))
  }
  return files
}

function expectAbsent(files: Map<string, Buffer>, label: string, value: string | Buffer): void {
  const forms: Array<[string, Buffer]> = typeof value === 'string' ? encodings(value) : [['bytes', value]]
  for (const [file, bytes] of files) {
    for (const [encoding, needle] of forms) {
      expect(bytes.includes(needle), `${label} (${encoding}) found in ${file}`).toBe(false)
    }
  }
}

describe.skipIf(onPostgres)('vault at rest', { timeout: 60_000 }, () => {
  let service: TestService
  let appKey: string
  let deletedId: string
  let deletedCiphertext: Buffer
  let patchedCiphertext: Buffer
  /** The files as they were while the service was running. */
  let runningFiles: Map<string, Buffer>
  /** The files after a clean close (WAL checkpointed). */
  let closedFiles: Map<string, Buffer>
  let direct: Knex

  beforeAll(async () => {
    service = await startTestService()
    const app = await service.createApplication({ name: 'Vault test', type: 'private', permissions: ['token:create', 'token:read', 'token:update', 'token:delete'] })
    appKey = app.key
    const request = (method: string, path: string, body?: unknown, contentType?: string) =>
      service.request(method, path, { key: appKey, body, contentType })

    const tokenized = await request('POST', '/tokenize', {
      card: { type: 'card', data: { number: CARD_NUMBER, expiration_month: 4, expiration_year: 2031, cvc: CVC } },
      bank: { type: 'bank', data: { routing_number: '021000021', account_number: ACCOUNT_NUMBER } },
      note: SECRET_STRING
    })
    expect(tokenized.status).toBe(200)
    expect((await request('POST', '/tokens', { type: 'token', data: SECRET_STRING, search_indexes: ['{{ data }}'] })).status).toBe(201)
    // Reads and lists write audit rows too.
    expect((await request('GET', `/tokens/${tokenized.body.card.id}`)).status).toBe(200)
    expect((await request('GET', '/tokens')).status).toBe(200)

    const patched = await request('POST', '/tokens', { type: 'token', data: PATCHED_AWAY })
    patchedCiphertext = await sql(service.host.vault.db.reader)('tokens').where({ id: patched.body.id }).first().then((row) => Buffer.from(row.sealed_data))
    expect((await request('PATCH', `/tokens/${patched.body.id}`, { data: 'new value' }, 'application/merge-patch+json')).status).toBe(200)

    const doomed = await request('POST', '/tokens', { id: 'doomed-token', type: 'token', data: DELETED_STRING, search_indexes: ['{{ data }}'] })
    deletedId = doomed.body.id
    deletedCiphertext = await sql(service.host.vault.db.reader)('tokens').where({ id: deletedId }).first().then((row) => Buffer.from(row.sealed_data))
    expect((await request('DELETE', `/tokens/${deletedId}`)).status).toBe(204)

    runningFiles = await readDataDir(service.dataDir)
    // Close the vault (checkpointing the WAL) but keep the directory to inspect it.
    await service.host.stop()
    closedFiles = await readDataDir(service.dataDir)
    direct = openVaultFile(service.dataDir)
  })
  afterAll(async () => {
    await direct?.destroy()
    await service.stop()
  })

  it('has a database and a WAL to inspect while running', () => {
    expect(runningFiles.get('tessera.db')?.length).toBeGreaterThan(0)
    expect(runningFiles.get('tessera.db-wal')?.length).toBeGreaterThan(0)
  })

  it('finds what is stored in the clear, so the scan itself works', () => {
    const contains = (files: Map<string, Buffer>, value: string | Buffer) => [...files.values()].some((bytes) => bytes.includes(value))
    expect(contains(closedFiles, service.tenantId)).toBe(true)
    expect(contains(closedFiles, 'doomed-token')).toBe(true)
    // Before the checkpoint the WAL still holds the page images from before the delete.
    expect(contains(runningFiles, deletedCiphertext)).toBe(true)
  })

  it.each([
    ['the card number', CARD_NUMBER],
    ['the card verification code', `"${CVC}"`],
    ['the bank account number', ACCOUNT_NUMBER],
    ['the string', SECRET_STRING],
    ['the patched-away string', PATCHED_AWAY],
    ['the deleted string', DELETED_STRING]
  ])('keeps %s out of the database and WAL while running and after close', (label, value) => {
    expectAbsent(runningFiles, label, value)
    expectAbsent(closedFiles, label, value)
  })

  it('keeps the application key and the management key out of the files', () => {
    for (const [label, key] of [
      ['the application key', appKey],
      ['the management key', service.adminKey]
    ]) {
      const secret = key.replace(/^key_(private|management)_/, '')
      expect(secret.length).toBeGreaterThanOrEqual(32)
      for (const files of [runningFiles, closedFiles]) {
        expectAbsent(files, label, key)
        expectAbsent(files, `${label} (random part)`, secret)
      }
    }
  })

  it('keeps the master key out of the files', () => {
    const master = Buffer.from(service.masterKey)
    for (const files of [runningFiles, closedFiles]) {
      expectAbsent(files, 'the master key', master)
      expectAbsent(files, 'the master key (base64)', master.toString('base64'))
    }
  })

  it('leaves no ciphertext of a deleted or re-sealed token after close', () => {
    expect(deletedCiphertext.length).toBeGreaterThan(24)
    expectAbsent(closedFiles, 'the deleted token ciphertext', deletedCiphertext)
    expectAbsent(closedFiles, 'the patched token old ciphertext', patchedCiphertext)
  })

  it('folds the WAL into the database on close', () => {
    expect(closedFiles.get('tessera.db-wal')?.length ?? 0).toBe(0)
  })

  it('keeps a tombstone of a deleted token and nothing else of it', async () => {
    expect(await direct('tokens').where({ id: deletedId })).toEqual([])
    expect(await direct('token_search_indexes').where({ token_id: deletedId })).toEqual([])
    expect(await direct('token_tombstones').where({ token_id: deletedId })).toEqual([
      expect.objectContaining({ tenant_id: service.tenantId, token_id: deletedId, type: 'token', reason: 'deleted', deleted_at: service.clock.now() })
    ])
  })

  it('refuses to open the vault with the wrong master key', async () => {
    await expect(openVault({ dataDir: service.dataDir, masterKey: generateMasterKey(), logger: silentLogger() })).rejects.toThrow(/Cannot unlock vault/)
    // The right key still opens it: the failed attempt changed nothing.
    const vault = await openVault({ dataDir: service.dataDir, masterKey: service.masterKey, logger: silentLogger() })
    await vault.close()
  })

  it('makes `tessera serve` exit non-zero with "Cannot unlock vault" for a wrong TESSERA_MASTER_KEY', async () => {
    const wrongKey = Buffer.from(generateMasterKey()).toString('base64')
    const { code, stdout, stderr } = await runCli(['serve', '--data-dir', service.dataDir, '--port', '0'], { TESSERA_MASTER_KEY: wrongKey })
    expect(code).not.toBe(0)
    expect(stderr).toMatch(/Cannot unlock vault/)
    expect(stderr).not.toContain(wrongKey)
    expect(stdout).not.toContain('listening')
  })

  it('makes `tessera serve` exit 2 for a TESSERA_MASTER_KEY that is not 32 bytes, without echoing it', async () => {
    const { code, stderr } = await runCli(['serve', '--data-dir', service.dataDir, '--port', '0'], { TESSERA_MASTER_KEY: 'c2hvcnQ=' })
    expect(code).toBe(2)
    expect(stderr).toMatch(/TESSERA_MASTER_KEY must be the base64 encoding of 32 bytes/)
    expect(stderr).not.toContain('c2hvcnQ=')
  })
})

const CLI = join(__dirname, '..', '..', '..', 'bin', 'tessera.cjs')

/** Runs the CLI to completion (45 s at most) and collects its output. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env, TESSERA_LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
