/**
 * Re-sealing a row onto a new data-key version during a rotation's pass: the
 * pass reads rows, opens and seals them again, then writes them back. A row
 * changed in between (on a team vault, another instance writing before it has
 * heard of the rotation, under the old version) keeps that change: the pass
 * writes only over the very bytes it read, on both engines.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sql } from '../../src/main/storage/connections'
import type { Database } from '../../src/main/storage/database'
import { listSealedOffVersion, resealObject } from '../../src/main/storage/repositories/sealed-objects.repository'
import { insertTenant } from '../../src/main/storage/repositories/tenants.repository'
import { tenantKeys } from '../../src/main/storage/tenant-keys'
import { usePostgresDatabase, useTemporaryDatabase } from '../helpers/database'

async function tokenSealedUnderVersion1(db: Database): Promise<{ tenantId: string; id: string }> {
  const tenantId = randomUUID()
  await insertTenant(db.writer, { id: tenantId, name: 'Reseal', owner_user_id: null, created_at: Date.now() })
  const id = randomUUID()
  await sql(db.writer)('tokens').insert({
    tenant_key: tenantKeys(db.writer).keyOf(tenantId),
    id,
    type: 'token',
    key_version: 1,
    sealed_data: randomBytes(64),
    fingerprint: randomBytes(32),
    fingerprint_expression: '',
    containers: '["/"]',
    metadata: '{}',
    created_at: Date.now()
  })
  return { tenantId, id }
}

function resealsOnlyWhatItRead(database: () => Database) {
  it('keeps a change made between its read and its write, made under the old version', async () => {
    const db = database()
    const { tenantId, id } = await tokenSealedUnderVersion1(db)
    const [read] = await listSealedOffVersion(db.writer, 'tokens', tenantId, 2, 10)
    expect(read.id).toBe(id)
    const changed = randomBytes(64)
    await sql(db.writer)('tokens').where({ id }).update({ sealed_data: changed })
    expect(await resealObject(db.writer, 'tokens', tenantId, read, randomBytes(80), 2)).toBe(0)
    const row = await sql(db.writer)('tokens').where({ id }).first()
    expect({ version: Number(row.key_version), sealed: Buffer.from(row.sealed_data).equals(changed) }).toEqual({ version: 1, sealed: true })
  })

  it('writes a row nobody changed meanwhile onto the new version', async () => {
    const db = database()
    const { tenantId, id } = await tokenSealedUnderVersion1(db)
    const [read] = await listSealedOffVersion(db.writer, 'tokens', tenantId, 2, 10)
    const resealed = randomBytes(80)
    expect(await resealObject(db.writer, 'tokens', tenantId, read, resealed, 2)).toBe(1)
    const row = await sql(db.writer)('tokens').where({ id }).first()
    expect({ version: Number(row.key_version), sealed: Buffer.from(row.sealed_data).equals(resealed) }).toEqual({ version: 2, sealed: true })
  })
}

describe('re-sealing during a rotation, on SQLite', () => {
  const database = useTemporaryDatabase('tessera-reseal-')
  resealsOnlyWhatItRead(() => database.db)
})

describe('re-sealing during a rotation, on PostgreSQL', () => {
  const database = usePostgresDatabase()
  resealsOnlyWhatItRead(() => database.db)
})
